/**
 * Sandbox tokens in the Worker (decision 250): minting one over a sandbox's nonce, and
 * reading a bearer token as one — its signature under `SUBSCRIBE_SECRET` first (a
 * forgery costs no lookup), then its sandbox's record, which says whether the nonce is
 * still the current one and the sandbox still active.
 */
import {
  mintSandboxToken,
  parseSandboxToken,
  type SandboxCredential,
  signatureHolds,
  workerConfig,
} from "../protocol/index.ts";
import { raise } from "./errors.ts";
import { sandboxStub } from "./sandbox-stub.ts";

/**
 * The token of `sandbox` over `nonce`, or a 503 when `SUBSCRIBE_SECRET` is not set.
 * @example const token = await sandboxTokenFor(env, id, nonce)
 */
export async function sandboxTokenFor(env: Env, sandbox: string, nonce: string): Promise<string> {
  return mintSandboxToken(tokenSecret(env), sandbox, nonce);
}

/**
 * The sandbox a bearer token opens, with the token's nonce, or null when the token is
 * not shaped like a sandbox token. One that is but does not hold is refused here with a
 * 401 that says why: a bad signature, a revoked nonce, an ended or forgotten sandbox.
 * @example const held = await sandboxOfBearer(env, token) // { sandbox: "sbx_default_…", nonce } or null
 */
export async function sandboxOfBearer(env: Env, token: string): Promise<SandboxCredential | null> {
  const parts = parseSandboxToken(token);
  if (parts === null) return null;
  if (!(await signatureHolds(tokenSecret(env), parts))) {
    raise(
      "unauthorized",
      "the sandbox token's signature does not verify (tampered, or issued with another SUBSCRIBE_SECRET)",
    );
  }
  const check = await sandboxStub(env, parts.sandbox).checkToken(parts.nonce);
  if (check.ok) return { sandbox: parts.sandbox, nonce: parts.nonce };
  if (check.error.code === "unauthorized") raise("unauthorized", check.error.message);
  raise("unauthorized", `the sandbox token ended with its sandbox: ${check.error.message}`);
}

function tokenSecret(env: Env): string {
  const secret = workerConfig(env).subscribeSecret;
  if (secret === null) {
    raise(
      "not_configured",
      "SUBSCRIBE_SECRET is not set: sandbox tokens can be neither issued nor checked until it is",
    );
  }
  return secret;
}
