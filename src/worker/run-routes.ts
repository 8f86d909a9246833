/**
 * The run routes (docs/decisions/122): the list of a run's calls, a WebSocket that
 * follows it, links to follow one of its calls, and the run page. Readers present a
 * bearer token or the run token from `runViewUrl` in `?token=`. A sandbox token's runs
 * are its own: the runId it names is kept as `<sandbox>:<runId>` (decision 252), and it
 * reads no other run.
 *
 * | route | does |
 * | --- | --- |
 * | `GET /v1/runs/:runId` | `{ runId, calls: RunCall[] }`, oldest first |
 * | `GET /v1/runs/:runId/socket` | WebSocket: `calls` batches, `synced`, then one `call` per change |
 * | `GET /v1/runs/:runId/calls/:id/links` | a subscribe token and URLs for a call of this run |
 * | `GET /run/:runId?token=` | the run page |
 */
import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import type { RunApi } from "../protocol/index.ts";
import { scopedCall } from "../tools/index.ts";
import {
  authorizeAgent,
  type Principal,
  refuseSandboxToken,
  requireApiConfigured,
  sandboxScope,
  subscribeSecret,
  TokenRefused,
} from "./auth.ts";
import { raise } from "./errors.ts";
import { invocationLinks } from "./invocation-links.ts";
import { unwrap } from "./invocation-stub.ts";
import { servePage } from "./pages.ts";
import { mintRunToken, verifyRunToken } from "./run-token.ts";
import { invocationIdParam, parseWith } from "./schemas.ts";

/** Path of the run page among the static assets (written to public/ by the client build). */
const RUN_PAGE_ASSET = "/run.html";

/** A runId: a body's (at most 256), under a sandbox token's `<sandbox>:` (at most 58 more). */
const runIdParam = z
  .string()
  .min(1)
  .max(256 + 58);

const TOKEN_FAILURES = {
  malformed:
    "the run token is malformed; use the runViewUrl returned when a call of the run was created",
  bad_signature:
    "the run token's signature does not verify (tampered, or issued with another SUBSCRIBE_SECRET)",
  expired:
    "the run token has expired; create a call of the run again (same toolCallId and runId) for a fresh runViewUrl",
} as const;

/**
 * Requires a valid run token for `runId` (`?token=`); bad, forged and expired ones are
 * 401, a token for anything else 403.
 */
async function authorizeRunToken(
  env: Env,
  token: string | undefined,
  runId: string,
): Promise<void> {
  if (token === undefined)
    throw new TokenRefused("missing", "missing ?token=<run token> (from runViewUrl)");
  const check = await verifyRunToken(subscribeSecret(env), token, runId, Date.now());
  if (check.ok) return;
  if (check.reason === "other_invocation") {
    throw new TokenRefused(
      check.reason,
      `the token was not issued for run ${JSON.stringify(runId)}`,
    );
  }
  throw new TokenRefused(check.reason, TOKEN_FAILURES[check.reason]);
}

/**
 * The runId a call is created with: a sandbox token's is kept under its sandbox's name,
 * so that a run of one sandbox can be neither joined nor read from another.
 * @example runIdOf({ kind: "sandbox", sandbox: "sbx_default_…" }, "session-1") // "sbx_default_…:session-1"
 */
export function runIdOf(principal: Principal | null, runId: string): string {
  const sandbox = sandboxScope(principal);
  if (sandbox === null || runId.startsWith(`${sandbox}:`)) return runId;
  return `${sandbox}:${runId}`;
}

/** A bearer token for `runId`: the operator's, or a sandbox token whose run it is. */
async function authorizeRunBearer(req: Request, env: Env, runId: string): Promise<Principal> {
  const principal = await authorizeAgent(req, env);
  const sandbox = sandboxScope(principal);
  if (sandbox !== null && !runId.startsWith(`${sandbox}:`)) refuseSandboxToken(sandbox);
  return principal;
}

/**
 * A bearer token (`authorizeRunBearer`), or a run token for `runId` when no
 * Authorization header is sent (null: scoped to the run already).
 */
async function authorizeRunReader(
  req: Request,
  env: Env,
  runId: string,
): Promise<Principal | null> {
  requireApiConfigured(env);
  const token = new URL(req.url).searchParams.get("token");
  if (req.headers.has("Authorization") || token === null) {
    return authorizeRunBearer(req, env, runId);
  }
  await authorizeRunToken(env, token, runId);
  return null;
}

function runStub(env: Env, runId: string): RunApi & { fetch(req: Request): Promise<Response> } {
  return env.RUNS.getByName(runId) as unknown as RunApi & {
    fetch(req: Request): Promise<Response>;
  };
}

/**
 * `runViewUrl` for the create answer of a call in run `runId`.
 * @example { ...(await runLinks(c.req.raw, c.env, "run-7")) } // { runViewUrl: "http://…/run/run-7?token=…" }
 */
export async function runLinks(
  req: Request,
  env: Env,
  runId: string,
): Promise<{ runViewUrl: string }> {
  const token = await mintRunToken(subscribeSecret(env), runId, Date.now());
  const origin = new URL(req.url).origin;
  return {
    runViewUrl: `${origin}/run/${encodeURIComponent(runId)}?token=${encodeURIComponent(token)}`,
  };
}

type RunRoutes = { Bindings: Env; Variables: { runId: string; principal: Principal | null } };

export const runRoutes = new Hono<RunRoutes>();

/** The route's `:runId`, validated, then the bearer token or a run token for that run. */
const runReader = createMiddleware<RunRoutes>(async (c, next) => {
  const runId = parseWith(runIdParam, c.req.param("runId"), "path.runId");
  c.set("principal", await authorizeRunReader(c.req.raw, c.env, runId));
  c.set("runId", runId);
  await next();
});

runRoutes.get("/:runId", runReader, async (c) => {
  const runId = c.get("runId");
  return c.json({ runId, calls: await runStub(c.env, runId).calls() });
});

runRoutes.get("/:runId/socket", runReader, async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    raise(
      "upgrade_required",
      "this route is a WebSocket; connect with Upgrade: websocket (or GET /v1/runs/:runId for the list)",
      { Upgrade: "websocket" },
    );
  }
  const run = runStub(c.env, c.get("runId"));
  return run.fetch(new Request(new URL("/socket", c.req.url), c.req.raw));
});

/** A fresh run page link (`toolwire link --run <runId>`); a bearer token only, like a call's. */
runRoutes.get("/:runId/links", async (c) => {
  const runId = parseWith(runIdParam, c.req.param("runId"), "path.runId");
  await authorizeRunBearer(c.req.raw, c.env, runId);
  if ((await runStub(c.env, runId).calls()).length === 0)
    raise(
      "not_found",
      `run ${JSON.stringify(runId)} has no calls; a run exists once a call names it`,
    );
  return c.json({ runId, ...(await runLinks(c.req.raw, c.env, runId)) });
});

runRoutes.get("/:runId/calls/:id/links", runReader, async (c) => {
  const runId = c.get("runId");
  const id = parseWith(invocationIdParam, c.req.param("id"), "path.id");
  const view = unwrap(await scopedCall(c.env, id, sandboxScope(c.get("principal"))).view());
  if (view.runId !== runId)
    raise("not_found", `invocation ${id} is not a call of run ${JSON.stringify(runId)}`);
  return c.json({ id, ...(await invocationLinks(c.req.raw, c.env, id)) });
});

/**
 * `GET /run/:runId?token=`: the run page (a static asset; it reads everything through
 * the API with the same token).
 * @example app.get("/run/:runId", runPage)
 */
export async function runPage(c: Context<{ Bindings: Env }>): Promise<Response> {
  const runId = parseWith(runIdParam, c.req.param("runId"), "path.runId");
  await authorizeRunToken(c.env, c.req.query("token"), runId);
  return servePage(c.env, c.req.url, RUN_PAGE_ASSET, "the run page");
}
