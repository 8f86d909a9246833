/**
 * Who may call what. Agents present `Authorization: Bearer <API_TOKEN>` on every API
 * route; browsers present a subscribe token in `?token=` on read routes of the one
 * invocation it names. Unconfigured secrets refuse (503), they never open the API.
 */
import type { Context, Env as HonoEnv, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { apiError, bearerToken, secretMatches, workerConfig } from "../protocol/index.ts";
import { ApiException, raise } from "./errors.ts";
import { type TokenCheck, verifySubscribeToken } from "./subscribe-token.ts";

/** Why a `?token=` was refused: a token check's reason, or no token at all. */
export type TokenProblem = Extract<TokenCheck, { ok: false }>["reason"] | "missing";

/**
 * A refused subscribe or run token: answered as the API error it carries (401, or 403
 * for another subject's token); the pages read `problem` to tell a person what to do.
 */
export class TokenRefused extends ApiException {
  readonly problem: TokenProblem;
  constructor(problem: TokenProblem, message: string) {
    super(apiError(problem === "other_invocation" ? "forbidden" : "unauthorized", message));
    this.name = "TokenRefused";
    this.problem = problem;
  }
}

/** Throws 503 unless `API_TOKEN` is set. Runs before every `/v1/*` route. */
export function requireApiConfigured(env: Env): void {
  if (workerConfig(env).apiToken === null) {
    raise(
      "not_configured",
      "API_TOKEN is not set: the API refuses every call until it is (wrangler secret put API_TOKEN, or .dev.vars locally)",
    );
  }
}

/**
 * The `SUBSCRIBE_SECRET`, or a 503 naming it.
 * @example const secret = subscribeSecret(env)
 */
export function subscribeSecret(env: Env): string {
  const secret = workerConfig(env).subscribeSecret;
  if (secret === null) {
    raise(
      "not_configured",
      "SUBSCRIBE_SECRET is not set: subscribe tokens can be neither issued nor checked until it is",
    );
  }
  return secret;
}

/**
 * Requires the agent's bearer token (write routes and listings). A valid subscribe token
 * alone is refused with 403: it is good for reading one invocation, never for this. One
 * that does not verify (malformed, tampered, expired) is no credential at all: 401.
 * @example await authorizeAgent(c.req.raw, c.env)
 */
export async function authorizeAgent(req: Request, env: Env): Promise<void> {
  requireApiConfigured(env);
  const header = req.headers.get("Authorization");
  if (header === null) {
    const token = new URL(req.url).searchParams.get("token");
    if (token !== null) await refuseSubscribeToken(env, token);
    raise("unauthorized", "missing Authorization: Bearer <API_TOKEN> header");
  }
  const token = bearerToken(header);
  if (token === null) {
    raise("unauthorized", "the Authorization header must be 'Bearer <API_TOKEN>'");
  }
  if (!(await secretMatches(token, workerConfig(env).apiToken ?? ""))) {
    raise("unauthorized", "the bearer token is not the configured API_TOKEN");
  }
}

const TOKEN_FAILURES = {
  malformed:
    "the subscribe token is malformed; use the token returned when the invocation was created",
  bad_signature:
    "the subscribe token's signature does not verify (tampered, or issued with another SUBSCRIBE_SECRET)",
  expired:
    "the subscribe token has expired; get fresh links with GET /v1/invocations/:id/links (toolwire link <id>)",
} as const;

/** A subscribe token on a route that needs the API token: 403 if it verifies, else 401. */
async function refuseSubscribeToken(env: Env, token: string): Promise<never> {
  // Any invocation's valid token is "valid" here: `other_invocation` is checked last.
  const secret = workerConfig(env).subscribeSecret;
  const check = secret
    ? await verifySubscribeToken(secret, token, "", Date.now())
    : ({ ok: false, reason: "bad_signature" } as const);
  if (check.ok || check.reason === "other_invocation") {
    raise(
      "forbidden",
      "subscribe tokens are read-only; this route needs Authorization: Bearer <API_TOKEN>",
    );
  }
  raise(
    "unauthorized",
    `${TOKEN_FAILURES[check.reason]}; this route needs Authorization: Bearer <API_TOKEN> in any case`,
  );
}

/**
 * Requires a valid subscribe token for `invocationId` and returns when it expires (unix
 * seconds). Bad, forged and expired tokens are 401; a valid token for another
 * invocation is 403.
 * @example const expiresAt = await authorizeSubscriber(c.env, c.req.query("token"), "call_1")
 */
export async function authorizeSubscriber(
  env: Env,
  token: string | undefined,
  invocationId: string,
): Promise<number> {
  if (token === undefined) {
    throw new TokenRefused(
      "missing",
      "missing ?token=<subscribeToken> (returned by POST /v1/invocations)",
    );
  }
  const check = await verifySubscribeToken(subscribeSecret(env), token, invocationId, Date.now());
  if (check.ok) return check.expiresAt;
  if (check.reason === "other_invocation") {
    throw new TokenRefused(
      check.reason,
      `the subscribe token was issued for another invocation, not ${invocationId}`,
    );
  }
  throw new TokenRefused(check.reason, TOKEN_FAILURES[check.reason]);
}

/**
 * Requires the agent's bearer token or a subscribe token for `invocationId` (read routes).
 * An `Authorization` header, when present, is what gets checked. Returns when the
 * credential expires (unix seconds): the token's expiry, or null for the bearer token.
 * @example await authorizeReader(c.req.raw, c.env, "call_1")
 */
export async function authorizeReader(
  req: Request,
  env: Env,
  invocationId: string,
): Promise<number | null> {
  requireApiConfigured(env);
  const token = new URL(req.url).searchParams.get("token");
  if (req.headers.has("Authorization") || token === null) {
    await authorizeAgent(req, env);
    return null;
  }
  return authorizeSubscriber(env, token, invocationId);
}

/**
 * Middleware for writes and listings: the agent's bearer token.
 * @example app.post("/v1/invocations", agentOnly, handler)
 */
export const agentOnly = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  await authorizeAgent(c.req.raw, c.env);
  await next();
});

/**
 * Middleware for reads of the invocation `idOf` names: the agent's bearer token, or that
 * invocation's subscribe token.
 * @example app.get("/v1/invocations/:id", withId, readerOf((c) => c.get("id")), handler)
 */
export function readerOf<E extends HonoEnv & { Bindings: Env; Variables: ReaderVariables }>(
  idOf: (c: Context<E>) => string,
): MiddlewareHandler<E> {
  return createMiddleware<E>(async (c, next) => {
    const expiresAt = await authorizeReader(c.req.raw, c.env, idOf(c));
    (c as unknown as Context<{ Variables: ReaderVariables }>).set("credentialExpiresAt", expiresAt);
    await next();
  });
}

/** What the reader middleware leaves for its route: when the credential expires (unix s). */
export type ReaderVariables = { credentialExpiresAt: number | null };
