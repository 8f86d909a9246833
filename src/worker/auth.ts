/**
 * Who may call what. The operator presents `Authorization: Bearer <API_TOKEN>` and may
 * call every API route; an agent given a sandbox token (decision 250) presents it the
 * same way and reaches that one sandbox (`anyAgent` routes, which scope what they
 * answer by `principalOf`); browsers present a subscribe token in `?token=` on read
 * routes of the one invocation it names. Unconfigured secrets refuse (503), they never
 * open the API.
 */
import type { Context, Env as HonoEnv, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { apiError, bearerToken, secretMatches, workerConfig } from "../protocol/index.ts";
import { ApiException, raise } from "./errors.ts";
import { sandboxOfBearer } from "./sandbox-token.ts";
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
 * Who presented a bearer token: the operator (`API_TOKEN`: every route, every sandbox),
 * or an agent holding one sandbox's token (that sandbox alone).
 */
export type Principal =
  | { kind: "operator" }
  /** `nonce`: the token's own, which a subscription is checked by while it lasts (decision 253). */
  | { kind: "sandbox"; sandbox: string; nonce: string };

/**
 * Requires a bearer token: the operator's `API_TOKEN` or a good sandbox token, and says
 * whose. A valid subscribe token alone is refused with 403: it is good for reading one
 * invocation, never for this. One that does not verify (malformed, tampered, expired)
 * is no credential at all: 401.
 * @example const principal = await authorizeAgent(c.req.raw, c.env)
 */
export async function authorizeAgent(req: Request, env: Env): Promise<Principal> {
  requireApiConfigured(env);
  const header = req.headers.get("Authorization");
  if (header === null) {
    const token = new URL(req.url).searchParams.get("token");
    if (token !== null) await refuseSubscribeToken(env, token);
    raise(
      "unauthorized",
      "missing Authorization: Bearer <API_TOKEN> header (or a sandbox token in its place)",
    );
  }
  const token = bearerToken(header);
  if (token === null) {
    raise(
      "unauthorized",
      "the Authorization header must be 'Bearer <API_TOKEN>' (or a sandbox token in its place)",
    );
  }
  if (await secretMatches(token, workerConfig(env).apiToken ?? "")) return { kind: "operator" };
  const held = await sandboxOfBearer(env, token);
  if (held === null) {
    raise("unauthorized", "the bearer token is not the configured API_TOKEN");
  }
  return { kind: "sandbox", ...held };
}

/**
 * Requires the operator's `API_TOKEN`: a good sandbox token is refused with 403.
 * @example await authorizeOperator(c.req.raw, c.env)
 */
export async function authorizeOperator(req: Request, env: Env): Promise<void> {
  const principal = await authorizeAgent(req, env);
  if (principal.kind === "sandbox") refuseSandboxToken(principal.sandbox);
}

/**
 * The 403 for a sandbox token on what it does not open.
 * @example if (id !== principal.sandbox) refuseSandboxToken(principal.sandbox)
 */
export function refuseSandboxToken(sandbox: string): never {
  raise(
    "forbidden",
    `a sandbox token opens its own sandbox (${sandbox}) and nothing else; this needs the operator's API_TOKEN`,
  );
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
      "subscribe tokens are read-only; this route needs Authorization: Bearer <API_TOKEN> (or a sandbox token)",
    );
  }
  raise(
    "unauthorized",
    `${TOKEN_FAILURES[check.reason]}; this route needs Authorization: Bearer <API_TOKEN> (or a sandbox token) in any case`,
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
 * Requires a bearer token or a subscribe token for `invocationId` (read routes). An
 * `Authorization` header, when present, is what gets checked. Returns who it is (a
 * subscribe token's holder reads that invocation only, so it is scoped already) and when
 * the credential expires (unix seconds): the token's expiry, or null for a bearer token.
 * @example await authorizeReader(c.req.raw, c.env, "call_1")
 */
export async function authorizeReader(
  req: Request,
  env: Env,
  invocationId: string,
): Promise<{ principal: Principal | null; expiresAt: number | null }> {
  requireApiConfigured(env);
  const token = new URL(req.url).searchParams.get("token");
  if (req.headers.has("Authorization") || token === null) {
    return { principal: await authorizeAgent(req, env), expiresAt: null };
  }
  return { principal: null, expiresAt: await authorizeSubscriber(env, token, invocationId) };
}

/** What the auth middlewares leave for their route: who called (null: a subscribe token). */
type PrincipalVariables = { principal: Principal | null };

/**
 * Who called, as the route's auth middleware found; null for a subscribe token, which
 * names its one invocation already.
 * @example const scope = sandboxScope(principalOf(c))
 */
export function principalOf(c: Context): Principal | null {
  return (c as Context<{ Variables: Partial<PrincipalVariables> }>).get("principal") ?? null;
}

/**
 * The one sandbox a caller is confined to: a sandbox token's, or null for the operator
 * and for a subscribe token (which names its one invocation already).
 * @example sandboxScope({ kind: "sandbox", sandbox: "sbx_default_…" }) // "sbx_default_…"
 */
export function sandboxScope(principal: Principal | null): string | null {
  return principal?.kind === "sandbox" ? principal.sandbox : null;
}

function setPrincipal(c: Context, principal: Principal | null): void {
  (c as unknown as Context<{ Variables: PrincipalVariables }>).set("principal", principal);
}

/**
 * Middleware for what the operator alone may do: `API_TOKEN`; a sandbox token is a 403.
 * @example app.post("/v1/sandboxes", operatorOnly, handler)
 */
export const operatorOnly = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  await authorizeOperator(c.req.raw, c.env);
  setPrincipal(c, { kind: "operator" });
  await next();
});

/**
 * Middleware for what a sandbox token may do too: the route reads `principalOf(c)` and
 * answers within that sandbox alone.
 * @example app.post("/v1/invocations", anyAgent, handler)
 */
export const anyAgent = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  setPrincipal(c, await authorizeAgent(c.req.raw, c.env));
  await next();
});

/**
 * Middleware for reads of the invocation `idOf` names: a bearer token, or that
 * invocation's subscribe token.
 * @example app.get("/v1/invocations/:id", withId, readerOf((c) => c.get("id")), handler)
 */
export function readerOf<E extends HonoEnv & { Bindings: Env; Variables: ReaderVariables }>(
  idOf: (c: Context<E>) => string,
): MiddlewareHandler<E> {
  return createMiddleware<E>(async (c, next) => {
    const { principal, expiresAt } = await authorizeReader(c.req.raw, c.env, idOf(c));
    setPrincipal(c as unknown as Context, principal);
    (c as unknown as Context<{ Variables: ReaderVariables }>).set("credentialExpiresAt", expiresAt);
    await next();
  });
}

/** What the reader middleware leaves for its route: when the credential expires (unix s). */
export type ReaderVariables = { credentialExpiresAt: number | null } & PrincipalVariables;
