import type { IncomingMessage } from "node:http";
import path from "node:path";
import { type Context, Hono } from "hono";
import * as z from "zod/mini";
import { bearerAuth } from "../auth.ts";
import { errorBody, internalError, SandboxError } from "../errors.ts";
import { previewRoutes } from "../network/preview-routes.ts";
import { networkRoutes, policyOf } from "../network/routes.ts";
import { MIN_DISK_BYTES } from "./config.ts";
import type { HostedSandbox } from "./hosted-sandbox.ts";
import { SANDBOX_ID_PATTERN, type SandboxSet } from "./sandbox-set.ts";
import { downloadTar, type TarPlace, uploadTar } from "./tar-files.ts";

const count = z.int().check(z.minimum(1));

const createSchema = z.object({
  id: z.string().check(z.regex(SANDBOX_ID_PATTERN, "id must be sbx_<host>_<20 hex digits>")),
  limits: z.optional(
    z.object({
      diskBytes: z.optional(z.int().check(z.minimum(MIN_DISK_BYTES))),
      maxExecs: z.optional(count),
      maxProcesses: z.optional(count),
      maxMemoryBytes: z.optional(count),
      maxFileBytes: z.optional(count),
      egressBytes: z.optional(count),
    }),
  ),
  /** Checked by `policyOf`, which names a bad entry. */
  network: z.optional(z.unknown()),
});

/**
 * The host's routes for created sandboxes, beside the default workspace's:
 * `POST|GET /v1/sandboxes`, `GET|DELETE /v1/sandboxes/:id`, and under
 * `/sandboxes/:id` everything the default workspace answers (`/healthz` open, `/v1/exec`,
 * `/v1/read`, …) plus `PUT|GET /v1/files?path=` (tar in and out). A sandbox's base URL
 * is `<host>/sandboxes/<id>`, so one `SandboxClient` speaks to it as to a host.
 * @example hostApp.route("/", sandboxRoutes(set, config.token));
 */
export function sandboxRoutes(set: SandboxSet, token: string): Hono {
  const app = new Hono();
  app.onError((err, c) => {
    const known = err instanceof SandboxError ? err : internalError(err, c.req.path);
    if (known.retryAfterSec !== undefined) c.header("Retry-After", String(known.retryAfterSec));
    return c.json(errorBody(known), known.status);
  });
  app.use("/v1/sandboxes", bearerAuth(token));
  app.use("/v1/sandboxes/*", bearerAuth(token));
  app.use("/sandboxes/:id/v1/*", bearerAuth(token));
  app.route("/", networkRoutes(set));
  app.route("/", previewRoutes(set));

  app.post("/v1/sandboxes", async (c) => {
    const req = createSchema.safeParse(await c.req.json().catch(() => null));
    if (!req.success) {
      const issues = req.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
      throw new SandboxError("bad_request", `invalid request: ${issues.join("; ")}`);
    }
    const sandbox = await set.create(req.data.id, req.data.limits, policyOf(req.data.network));
    return c.json(await sandbox.info(), 201);
  });
  app.get("/v1/sandboxes", async (c) =>
    c.json({ sandboxes: await Promise.all(set.list().map((s) => s.info())) }),
  );
  app.get("/v1/sandboxes/:id", async (c) => c.json(await set.find(c.req.param("id")).info()));
  app.delete("/v1/sandboxes/:id", async (c) => {
    const id = c.req.param("id");
    await set.remove(id);
    return c.json({ id, status: "deleted" });
  });

  app.get("/sandboxes/:id/healthz", (c) =>
    c.json({ ok: true, execs: set.find(c.req.param("id")).parts.gate.load() }),
  );
  app.put("/sandboxes/:id/v1/files", async (c) => {
    const sandbox = set.find(c.req.param("id"));
    try {
      return c.json(await uploadTar(tarPlace(sandbox), c.req.query("path") ?? "", c.req.raw.body));
    } catch (err) {
      // A refused body the host stopped reading (past MAX_DRAIN_BYTES): end the connection
      // with the answer, or the caller's upload would wait on it forever.
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
      if (incoming && !incoming.complete) c.header("connection", "close");
      throw err;
    }
  });
  app.get("/sandboxes/:id/v1/files", async (c) => {
    const sandbox = set.find(c.req.param("id"));
    const body = await downloadTar(tarPlace(sandbox), c.req.query("path") ?? "");
    return new Response(body, {
      headers: { "content-type": "application/x-tar", "cache-control": "no-store" },
    });
  });
  app.all("/sandboxes/:id/v1/*", (c) => forward(c, set.find(c.req.param("id"))));
  return app;
}

function tarPlace(sandbox: HostedSandbox): TarPlace {
  return {
    workspace: sandbox.parts.workspace,
    jail: sandbox.parts.jail,
    incomingDir: path.join(path.dirname(sandbox.parts.workspace.root), "incoming"),
  };
}

/** The request, without the `/sandboxes/:id` prefix, answered by the sandbox's own app. */
function forward(c: Context, sandbox: HostedSandbox): Promise<Response> {
  const url = new URL(c.req.url);
  url.pathname = url.pathname.slice(`/sandboxes/${sandbox.id}`.length);
  return Promise.resolve(sandbox.parts.app.fetch(new Request(url, c.req.raw)));
}
