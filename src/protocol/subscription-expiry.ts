/**
 * How long a subscriber may read: a subscribe token's expiry travels from the Worker
 * (which verified the token) to the object in one header, and the object stops sending
 * to a subscriber once it has passed (docs/decisions/112). The bearer token does not
 * expire: no header.
 */

/** Header the Worker sets on a subscription it forwards; any copy from the client is dropped. */
const TOKEN_EXPIRES_HEADER = "x-toolwire-token-expires";

/**
 * Header naming the sandbox token a subscription was opened with (`<sandbox> <nonce>`),
 * set by the Worker alone: the object checks it still holds at each heartbeat
 * (docs/decisions/253).
 */
const SANDBOX_CREDENTIAL_HEADER = "x-toolwire-sandbox-credential";

/** The sandbox token a subscriber reads with: its sandbox and the token's nonce. */
export interface SandboxCredential {
  sandbox: string;
  nonce: string;
}

/**
 * The request the Worker forwards to the object: `url`, the caller's request, and the
 * token's expiry (unix seconds) or none.
 * @example stub.fetch(forwardedSubscription(req, url, 1764000000))
 */
export function forwardedSubscription(
  req: Request,
  url: URL,
  expiresAt: number | null,
  credential: SandboxCredential | null = null,
): Request {
  const forwarded = new Request(url, req);
  forwarded.headers.delete(TOKEN_EXPIRES_HEADER);
  forwarded.headers.delete(SANDBOX_CREDENTIAL_HEADER);
  if (expiresAt !== null) forwarded.headers.set(TOKEN_EXPIRES_HEADER, String(expiresAt));
  if (credential !== null) {
    forwarded.headers.set(SANDBOX_CREDENTIAL_HEADER, `${credential.sandbox} ${credential.nonce}`);
  }
  return forwarded;
}

/**
 * The sandbox token the Worker said a subscription was opened with, or null (the
 * operator's token, a subscribe token).
 * @example sandboxCredentialOf(request) // { sandbox: "sbx_default_…", nonce: "…" }
 */
export function sandboxCredentialOf(request: Request): SandboxCredential | null {
  const raw = request.headers.get(SANDBOX_CREDENTIAL_HEADER);
  const match = raw === null ? null : /^(\S+) (\S+)$/.exec(raw);
  return match ? { sandbox: match[1]!, nonce: match[2]! } : null;
}

/**
 * The expiry (epoch ms) the Worker attached, or null for a subscriber that never expires.
 * @example tokenExpiryOf(request) // 1764000000000
 */
export function tokenExpiryOf(request: Request): number | null {
  const raw = request.headers.get(TOKEN_EXPIRES_HEADER);
  if (raw === null || !/^\d{1,12}$/.test(raw)) return null;
  return Number(raw) * 1000;
}

/**
 * Whether a subscriber whose token expires at `expiresAtMs` may no longer read at
 * `nowMs`: from the expiry second on, as `verifySubscribeToken` counts it.
 * @example expired(1000, 999) // false; expired(1000, 1000) // true
 */
export function expired(expiresAtMs: number | null, nowMs: number): boolean {
  return expiresAtMs !== null && nowMs >= expiresAtMs;
}
