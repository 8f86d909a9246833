/**
 * The exec route group: `POST /v1/exec` (start, NDJSON Shell updates),
 * `GET /v1/exec/:execId` (reattach) and `POST /v1/exec/:execId/kill`.
 */
import { stat } from "node:fs/promises";
import { Hono } from "hono";
import type { SandboxConfig } from "../config.ts";
import { SandboxError } from "../errors.ts";
import type { Jail } from "../jail/jail.ts";
import { execRequestSchema, execTooLong, parseBody } from "../requests.ts";
import type { SpillFolder } from "../spill-folder.ts";
import type { Workspace } from "../workspace.ts";
import type { ExecGate, ExecTicket } from "./exec-gate.ts";
import { type ExecRegistry, findRun } from "./exec-registry.ts";
import type { JailAhead } from "./jail-ahead.ts";
import { execUpdateStream } from "./update-stream.ts";

/** What the exec routes run commands with. */
interface ExecRouteParts {
  config: SandboxConfig;
  registry: ExecRegistry;
  gate: ExecGate;
  workspace: Workspace;
  spills: SpillFolder;
  jail: Jail;
  ahead?: JailAhead;
}

/**
 * The exec routes, to mount behind the host's auth and body limit.
 * @example app.route("/", execRoutes({ config, registry, gate, workspace, spills, jail }));
 */
export function execRoutes(parts: ExecRouteParts): Hono {
  const { config, registry, gate, workspace, spills, jail, ahead } = parts;
  const pacing = {
    minIntervalMs: config.minIntervalMs,
    targetBytesPerSecond: config.targetBytesPerSecond,
  };
  const app = new Hono();

  app.post("/v1/exec", async (c) => {
    const req = await parseBody(c, execRequestSchema);
    const tooLong = execTooLong(req);
    if (tooLong) throw new SandboxError("bad_request", tooLong);
    if (registry.get(req.execId)) throw execExists(req.execId);
    // The first exec of a sandbox made a moment ago: its jail may still be spawning (decision 276).
    if (ahead?.pending) await ahead.started();
    const cwd = await workspace.resolve(req.cwd);
    await assertDirectory(cwd, req.cwd);
    // The checks above awaited: another request may have taken the id meanwhile.
    if (registry.get(req.execId)) throw execExists(req.execId);
    const run = registry.register({
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
      tty: req.tty,
      stdin: req.stdin,
      ahead,
    });
    let ticket: ExecTicket;
    try {
      ticket = gate.enter((ahead) => run.wait(ahead));
    } catch (err) {
      registry.forget(run.execId);
      throw err;
    }
    // Its turn may come after the answer began: the stream shows it queued, then running.
    // A kill while it waits ends it unstarted and gives up its place (exec-run.ts).
    const stopWaiting = run.subscribe(() => {
      if (run.exit) ticket.cancel();
    });
    void ticket.admitted.then((release) => {
      stopWaiting();
      if (run.exit) return release();
      run.start();
      if (run.exit) return release();
      const stop = run.subscribe(() => {
        if (!run.exit) return;
        stop();
        release();
      });
    });
    return ndjson(execUpdateStream(run, pacing));
  });

  app.get("/v1/exec/:execId", (c) =>
    ndjson(execUpdateStream(findRun(registry, c.req.param("execId")), pacing)),
  );

  app.post("/v1/exec/:execId/kill", (c) => {
    const run = findRun(registry, c.req.param("execId"));
    if (!run.exit) run.kill();
    return c.json({ execId: run.execId, status: run.exit ? "exited" : "killing" });
  });

  return app;
}

function execExists(execId: string): SandboxError {
  return new SandboxError(
    "conflict",
    `exec '${execId}' already exists; reattach with GET /v1/exec/${execId}`,
  );
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
