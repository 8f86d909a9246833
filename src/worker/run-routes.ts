/**
 * The run routes (docs/decisions/122): the list of a run's calls, a WebSocket that
 * follows it, links to follow one of its calls, and the run page. Readers present the
 * bearer token or the run token from `runViewUrl` in `?token=`.
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
import { authorizeAgent, requireApiConfigured, subscribeSecret, TokenRefused } from "./auth.ts";
import { raise } from "./errors.ts";
import { invocationLinks } from "./invocation-links.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { servePage } from "./pages.ts";
import { mintRunToken, verifyRunToken } from "./run-token.ts";
import { invocationIdParam, parseWith } from "./schemas.ts";

/** Path of the run page among the static assets (written to public/ by the client build). */
export const RUN_PAGE_ASSET = "/run.html";

export const runIdParam = z.string().min(1).max(256);

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

/** The bearer token, or a run token for `runId` when no Authorization header is sent. */
async function authorizeRunReader(req: Request, env: Env, runId: string): Promise<void> {
  requireApiConfigured(env);
  const token = new URL(req.url).searchParams.get("token");
  if (req.headers.has("Authorization") || token === null) return authorizeAgent(req, env);
  return authorizeRunToken(env, token, runId);
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

type RunRoutes = { Bindings: Env; Variables: { runId: string } };

export const runRoutes = new Hono<RunRoutes>();

/** The route's `:runId`, validated, then the bearer token or a run token for that run. */
const runReader = createMiddleware<RunRoutes>(async (c, next) => {
  const runId = parseWith(runIdParam, c.req.param("runId"), "path.runId");
  await authorizeRunReader(c.req.raw, c.env, runId);
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

/** A fresh run page link (`toolwire link --run <runId>`); the API token only, like a call's. */
runRoutes.get("/:runId/links", async (c) => {
  const runId = parseWith(runIdParam, c.req.param("runId"), "path.runId");
  await authorizeAgent(c.req.raw, c.env);
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
  const view = unwrap(await invocationStub(c.env, id).view());
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
