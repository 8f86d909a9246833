import { stat } from "node:fs/promises";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type * as z from "zod/mini";
import { EXEC_ID_PATTERN } from "../src/protocol/index.ts";
import { bearerAuth } from "./auth.ts";
import type { SandboxConfig } from "./config.ts";
import { errorBody, SandboxError } from "./errors.ts";
import { ExecRegistry } from "./exec/exec-registry.ts";
import { execUpdateStream } from "./exec/update-stream.ts";
import { editFile, writeFile } from "./files/change-file.ts";
import { FileQueue } from "./files/file-queue.ts";
import { findFiles } from "./files/find-files.ts";
import { listDirectory } from "./files/list-directory.ts";
import { readLines } from "./files/read-file.ts";
import { glob, grep } from "./files/search.ts";
import { Jail } from "./jail/jail.ts";
import { PidsCgroups } from "./jail/pids-cgroup.ts";
import {
  editRequestSchema,
  execRequestSchema,
  findRequestSchema,
  globRequestSchema,
  grepRequestSchema,
  lsRequestSchema,
  readRequestSchema,
  writeRequestSchema,
} from "./requests.ts";
import { spillResponse } from "./spill-route.ts";
import { Workspace } from "./workspace.ts";

/** Where spill files live, relative to the workspace root. */
export const SPILL_DIR = ".toolwire/spill";

/** Defaults of the file tools (SPEC §9): 2000 lines / 50 KiB, 2000 chars per line. */
export const FILE_TOOL_DEFAULTS = {
  readLimit: 2000,
  readMaxBytes: 50 * 1024,
  readMaxLineChars: 2000,
  grepLimit: 100,
  globLimit: 1000,
  findLimit: 1000,
  lsLimit: 500,
} as const;

const MAX_BODY_BYTES = 1024 * 1024;

/** Room a request body has above a write's content: JSON escaping of a whole file can double it. */
function bodyLimitFor(config: SandboxConfig): number {
  return Math.max(MAX_BODY_BYTES, 2 * config.maxWriteBytes + 64 * 1024);
}

export interface SandboxApp {
  app: Hono;
  registry: ExecRegistry;
  workspace: Workspace;
  jail: Jail;
}

/**
 * The sandbox host's routes: `/healthz` (open), and behind the bearer token
 * `/v1/exec` (NDJSON Shell updates), `/v1/exec/:execId` (reattach),
 * `/v1/exec/:execId/kill`, `/v1/read`, `/v1/grep`, `/v1/glob`, `/v1/find`, `/v1/ls`,
 * `/v1/write`, `/v1/edit`.
 * @example const { app } = createSandboxApp(configFromEnv(process.env));
 */
export function createSandboxApp(config: SandboxConfig): SandboxApp {
  const workspace = new Workspace(config.root);
  const jail = new Jail(workspace.root, {
    isolation: config.isolation,
    network: config.network,
    limits: config.limits,
    cgroups: config.isolation === "bwrap" ? PidsCgroups.find() : null,
  });
  const registry = new ExecRegistry(config.keepFinishedMs);
  const pacing = {
    minIntervalMs: config.minIntervalMs,
    targetBytesPerSecond: config.targetBytesPerSecond,
  };
  const app = new Hono();
  const changes = { workspace, queue: new FileQueue(), maxBytes: config.maxWriteBytes };
  const maxBodyBytes = bodyLimitFor(config);

  app.onError((err, c) => {
    if (err instanceof SandboxError) return c.json(errorBody(err), err.status);
    const internal = new SandboxError(500, "internal", `sandbox host error: ${err.message}`);
    return c.json(errorBody(internal), 500 as ContentfulStatusCode);
  });
  app.notFound((c) =>
    c.json(
      errorBody(new SandboxError(404, "not_found", `no route ${c.req.method} ${c.req.path}`)),
      404,
    ),
  );

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.use("/v1/*", bearerAuth(config.token));
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: () => {
        throw new SandboxError(413, "too_large", `request body exceeds ${maxBodyBytes} bytes`);
      },
    }),
  );

  app.post("/v1/exec", async (c) => {
    const req = await parseBody(c, execRequestSchema);
    if (registry.get(req.execId)) {
      throw new SandboxError(
        409,
        "conflict",
        `exec '${req.execId}' already exists; reattach with GET /v1/exec/${req.execId}`,
      );
    }
    const cwd = await workspace.resolve(req.cwd);
    await assertDirectory(cwd, req.cwd);
    const spillPath = `${SPILL_DIR}/${req.execId}.log`;
    const run = registry.start({
      execId: req.execId,
      command: req.command,
      cwd,
      env: req.env ?? {},
      jail,
      timeoutSec: req.timeoutSec,
      limits: req.limits,
      spillAbsPath: `${workspace.root}/${spillPath}`,
      spillPath,
      workspace,
      killGraceMs: config.killGraceMs,
      maxSpillBytes: config.maxSpillBytes,
    });
    return ndjson(execUpdateStream(run, pacing));
  });

  app.get("/v1/exec/:execId", (c) =>
    ndjson(execUpdateStream(findRun(registry, c.req.param("execId")), pacing)),
  );

  app.get("/v1/exec/:execId/spill", (c) =>
    spillResponse(workspace, SPILL_DIR, c.req.param("execId"), c.req.header("range")),
  );

  app.post("/v1/exec/:execId/kill", (c) => {
    const run = findRun(registry, c.req.param("execId"));
    if (!run.exit) run.kill();
    return c.json({ execId: run.execId, status: run.exit ? "exited" : "killing" });
  });

  app.post("/v1/read", async (c) => {
    const req = await parseBody(c, readRequestSchema);
    const abs = await workspace.resolve(req.path);
    return c.json(
      await readLines(workspace, abs, workspace.relative(abs), {
        offset: req.offset ?? 1,
        limit: req.limit ?? FILE_TOOL_DEFAULTS.readLimit,
        maxBytes: FILE_TOOL_DEFAULTS.readMaxBytes,
        maxLineChars: FILE_TOOL_DEFAULTS.readMaxLineChars,
      }),
    );
  });

  app.post("/v1/grep", async (c) => {
    const req = await parseBody(c, grepRequestSchema);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.grepLimit;
    return c.json(await grep({ workspace, jail, rgPath: config.rgPath }, { ...req, limit }));
  });

  app.post("/v1/glob", async (c) => {
    const req = await parseBody(c, globRequestSchema);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.globLimit;
    return c.json(await glob({ workspace, jail, rgPath: config.rgPath }, { ...req, limit }));
  });

  app.post("/v1/find", async (c) => {
    const req = await parseBody(c, findRequestSchema);
    return c.json(
      await findFiles(workspace, { ...req, limit: req.limit ?? FILE_TOOL_DEFAULTS.findLimit }),
    );
  });

  app.post("/v1/ls", async (c) => {
    const req = await parseBody(c, lsRequestSchema);
    const abs = await workspace.resolve(req.path);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.lsLimit;
    return c.json(await listDirectory(workspace, abs, workspace.relative(abs), limit));
  });

  app.post("/v1/write", async (c) =>
    c.json(await writeFile(changes, await parseBody(c, writeRequestSchema))),
  );

  app.post("/v1/edit", async (c) =>
    c.json(await editFile(changes, await parseBody(c, editRequestSchema))),
  );

  return { app, registry, workspace, jail };
}

function findRun(registry: ExecRegistry, execId: string) {
  const run = EXEC_ID_PATTERN.test(execId) ? registry.get(execId) : undefined;
  if (!run) {
    throw new SandboxError(
      404,
      "not_found",
      `no exec '${execId}' on this sandbox (never started, or finished more than 10 minutes ago)`,
    );
  }
  return run;
}

async function parseBody<S extends z.ZodMiniType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new SandboxError(400, "bad_request", "request body must be a JSON object");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
    throw new SandboxError(400, "bad_request", `invalid request: ${issues.join("; ")}`);
  }
  return parsed.data;
}

async function assertDirectory(abs: string, rel: string | undefined): Promise<void> {
  const info = await stat(abs).catch(() => null);
  if (!info?.isDirectory()) {
    throw new SandboxError(400, "bad_request", `cwd '${rel}' is not a directory in the workspace`);
  }
}

function ndjson(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" },
  });
}
