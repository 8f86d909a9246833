import { stat } from "node:fs/promises";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type * as z from "zod/mini";
import { EXEC_ID_PATTERN } from "../src/protocol/index.ts";
import { bearerAuth } from "./auth.ts";
import type { SandboxConfig } from "./config.ts";
import { errorBody, SandboxError } from "./errors.ts";
import { ExecGate } from "./exec/exec-gate.ts";
import { ExecRegistry } from "./exec/exec-registry.ts";
import { execUpdateStream } from "./exec/update-stream.ts";
import { editFile, writeFile } from "./files/change-file.ts";
import { FileQueue } from "./files/file-queue.ts";
import { findFiles } from "./files/find-files.ts";
import { listDirectory } from "./files/list-directory.ts";
import { openInside } from "./files/open-inside.ts";
import { readLines } from "./files/read-file.ts";
import { glob, grep } from "./files/search.ts";
import { Jail } from "./jail/jail.ts";
import { MemoryCgroups } from "./jail/memory-cgroup.ts";
import { PidsCgroups } from "./jail/pids-cgroup.ts";
import {
  editRequestSchema,
  execRequestSchema,
  execTooLong,
  findRequestSchema,
  globRequestSchema,
  grepRequestSchema,
  lsRequestSchema,
  readRequestSchema,
  writeRequestSchema,
} from "./requests.ts";
import { SPILL_JAIL_PATH, SpillFolder } from "./spill-folder.ts";
import { spillResponse } from "./spill-route.ts";
import { Workspace } from "./workspace.ts";

/** Where spill files live, as jails and the file tools name it (the host's folder is elsewhere). */
export const SPILL_DIR = SPILL_JAIL_PATH;

/** File tool defaults (docs/design.md#sandboxes): 2000 lines / 50 KiB, 2000 chars per line. */
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
  spills: SpillFolder;
  jail: Jail;
}

/**
 * The sandbox host's routes: `/healthz` (open), and behind the bearer token
 * `/v1/exec` (NDJSON Shell updates), `/v1/exec/:execId` (reattach),
 * `/v1/exec/:execId/kill`, `/v1/read`, `/v1/grep`, `/v1/glob`, `/v1/find`, `/v1/ls`,
 * `/v1/write`, `/v1/edit`.
 * @example const { app } = createSandboxApp(configFromEnv(process.env));
 */
export function createSandboxApp(
  config: SandboxConfig,
  /** Where its commands' pids cgroups go (a created sandbox's own); default: a new parent. */
  cgroups: () => PidsCgroups | null = PidsCgroups.find,
): SandboxApp {
  const workspace = new Workspace(config.root);
  const spills = new SpillFolder(config.spillDir ?? `${workspace.root}.spill`, workspace.root);
  const jail = new Jail(workspace.root, {
    spillFolder: spills.hostPath,
    isolation: config.isolation,
    network: config.network,
    proc: config.jailProc,
    limits: config.limits,
    cgroups: config.isolation === "bwrap" ? cgroups() : null,
    memory: config.isolation === "bwrap" ? MemoryCgroups.find() : null,
  });
  const registry = new ExecRegistry(config.keepFinishedMs);
  const gate = new ExecGate(config.maxRunningExecs, config.execQueueMs);
  const pacing = {
    minIntervalMs: config.minIntervalMs,
    targetBytesPerSecond: config.targetBytesPerSecond,
  };
  const app = new Hono();
  const changes = { workspace, queue: new FileQueue(), maxBytes: config.maxWriteBytes };
  const maxBodyBytes = bodyLimitFor(config);

  app.onError((err, c) => {
    if (err instanceof SandboxError) {
      if (err.retryAfterSec !== undefined) c.header("Retry-After", String(err.retryAfterSec));
      return c.json(errorBody(err), err.status);
    }
    const internal = new SandboxError("internal", `sandbox host error: ${err.message}`);
    return c.json(errorBody(internal), 500 as ContentfulStatusCode);
  });
  app.notFound((c) =>
    c.json(errorBody(new SandboxError("not_found", `no route ${c.req.method} ${c.req.path}`)), 404),
  );

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.use("/v1/*", bearerAuth(config.token));
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: () => {
        throw new SandboxError("too_large", `request body exceeds ${maxBodyBytes} bytes`);
      },
    }),
  );

  app.post("/v1/exec", async (c) => {
    const req = await parseBody(c, execRequestSchema);
    const tooLong = execTooLong(req);
    if (tooLong) throw new SandboxError("bad_request", tooLong);
    if (registry.get(req.execId)) {
      throw new SandboxError(
        "conflict",
        `exec '${req.execId}' already exists; reattach with GET /v1/exec/${req.execId}`,
      );
    }
    const cwd = await workspace.resolve(req.cwd);
    await assertDirectory(cwd, req.cwd);
    const release = await gate.enter();
    if (registry.get(req.execId)) {
      release();
      throw new SandboxError(
        "conflict",
        `exec '${req.execId}' already exists; reattach with GET /v1/exec/${req.execId}`,
      );
    }
    const run = registry.start({
      execId: req.execId,
      command: req.command,
      cwd,
      env: req.env ?? {},
      jail,
      timeoutSec: req.timeoutSec,
      idleTimeoutSec: req.idleTimeoutSec,
      limits: req.limits,
      spills,
      killGraceMs: config.killGraceMs,
      maxSpillBytes: config.maxSpillBytes,
    });
    if (run.exit) release();
    else {
      const stop = run.subscribe(() => {
        if (!run.exit) return;
        stop();
        release();
      });
    }
    return ndjson(execUpdateStream(run, pacing));
  });

  app.get("/v1/exec/:execId", (c) =>
    ndjson(execUpdateStream(findRun(registry, c.req.param("execId")), pacing)),
  );

  app.get("/v1/exec/:execId/spill", (c) =>
    spillResponse(spills, c.req.param("execId"), c.req.header("range")),
  );

  app.post("/v1/exec/:execId/kill", (c) => {
    const run = findRun(registry, c.req.param("execId"));
    if (!run.exit) run.kill();
    return c.json({ execId: run.execId, status: run.exit ? "exited" : "killing" });
  });

  app.post("/v1/read", async (c) => {
    const req = await parseBody(c, readRequestSchema);
    const window = {
      offset: req.offset ?? 1,
      limit: req.limit ?? FILE_TOOL_DEFAULTS.readLimit,
      maxBytes: FILE_TOOL_DEFAULTS.readMaxBytes,
      maxLineChars: req.maxLineChars ?? FILE_TOOL_DEFAULTS.readMaxLineChars,
    };
    const spillName = SpillFolder.nameOf(req.path);
    if (spillName !== null) {
      const handle = await spills.openRead(spillName);
      return c.json(await readLines(handle, req.path, window));
    }
    const abs = await workspace.resolve(req.path);
    const rel = workspace.relative(abs);
    return c.json(await readLines(await openInside(workspace, abs, rel, "file"), rel, window));
  });

  app.post("/v1/grep", async (c) => {
    const req = await parseBody(c, grepRequestSchema);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.grepLimit;
    return c.json(
      await grep({ workspace, spills, jail, rgPath: config.rgPath }, { ...req, limit }),
    );
  });

  app.post("/v1/glob", async (c) => {
    const req = await parseBody(c, globRequestSchema);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.globLimit;
    return c.json(
      await glob({ workspace, spills, jail, rgPath: config.rgPath }, { ...req, limit }),
    );
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

  return { app, registry, workspace, spills, jail };
}

function findRun(registry: ExecRegistry, execId: string) {
  const run = EXEC_ID_PATTERN.test(execId) ? registry.get(execId) : undefined;
  if (!run) {
    throw new SandboxError(
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
    throw new SandboxError("bad_request", "request body must be a JSON object");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
    throw new SandboxError("bad_request", `invalid request: ${issues.join("; ")}`);
  }
  return parsed.data;
}

async function assertDirectory(abs: string, rel: string | undefined): Promise<void> {
  const info = await stat(abs).catch(() => null);
  if (!info?.isDirectory()) {
    throw new SandboxError("bad_request", `cwd '${rel}' is not a directory in the workspace`);
  }
}

function ndjson(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" },
  });
}
