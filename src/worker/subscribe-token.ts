/**
 * Subscribe tokens: what a browser presents in `?token=` to read one invocation.
 *
 * Format: `v1.<expiry unix seconds>.<base64url(invocation id)>.<base64url(HMAC-SHA256)>`,
 * the MAC taken with `SUBSCRIBE_SECRET` over `toolwire-subscribe:v1:<id>:<expiry>`.
 * The id is carried in the token so a valid token for another invocation is told apart
 * (403) from a forged or expired one (401). Tokens grant reads only; the routes decide
 * which those are (see docs/decisions/051-subscribe-tokens.md).
 */
import { bytesEqual, hmacSha256, toBase64Url } from "../protocol/index.ts";

/** Default lifetime of a subscribe token: one hour. */
export const SUBSCRIBE_TOKEN_TTL_SECONDS = 3600;

const encoder = new TextEncoder();

export type TokenCheck =
  | { ok: true; invocationId: string; expiresAt: number }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired" | "other_invocation" };

function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const padded = text.replaceAll("-", "+").replaceAll("_", "/");
  try {
    const binary = atob(padded + "=".repeat((4 - (padded.length % 4)) % 4));
    return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

function sign(secret: string, invocationId: string, expiresAt: number): Promise<Uint8Array> {
  return hmacSha256(secret, `toolwire-subscribe:v1:${invocationId}:${expiresAt}`);
}

/**
 * Mints a read-only token for one invocation.
 * @example await mintSubscribeToken(env.SUBSCRIBE_SECRET, "call_1", Date.now()) // "v1.1764..."
 */
export async function mintSubscribeToken(
  secret: string,
  invocationId: string,
  nowMs: number,
  ttlSeconds: number = SUBSCRIBE_TOKEN_TTL_SECONDS,
): Promise<string> {
  const expiresAt = Math.floor(nowMs / 1000) + ttlSeconds;
  const sig = await sign(secret, invocationId, expiresAt);
  return `v1.${expiresAt}.${toBase64Url(encoder.encode(invocationId))}.${toBase64Url(sig)}`;
}

/** A token's own check: well-formed, signed, not expired; what it names (its subject). */
export type SignedCheck =
  | { ok: true; subject: string; expiresAt: number }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

/**
 * Checks a token signed with `secret` — well-formed, signature, expiry, in that order —
 * and answers its subject (an invocation id, `run/<runId>`, `attach/<id>/<name>`).
 * @example await verifySignedToken(secret, token, Date.now()) // { ok: true, subject: "call_1", ... }
 */
export async function verifySignedToken(
  secret: string,
  token: string,
  nowMs: number,
): Promise<SignedCheck> {
  const parts = token.split(".");
  if (parts.length !== 4 || parts[0] !== "v1") return { ok: false, reason: "malformed" };
  const [, expiryText = "", idText = "", sigText = ""] = parts;
  const idBytes = fromBase64Url(idText);
  const presented = fromBase64Url(sigText);
  if (!/^\d{1,12}$/.test(expiryText) || idBytes === null || presented === null) {
    return { ok: false, reason: "malformed" };
  }
  const expiresAt = Number(expiryText);
  let subject: string;
  try {
    subject = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(idBytes);
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (!bytesEqual(await sign(secret, subject, expiresAt), presented)) {
    return { ok: false, reason: "bad_signature" };
  }
  if (expiresAt * 1000 <= nowMs) return { ok: false, reason: "expired" };
  return { ok: true, subject, expiresAt };
}

/**
 * Checks a token for `invocationId`: well-formed, signed with `secret`, not expired,
 * and issued for this invocation — in that order.
 * @example await verifySubscribeToken(secret, token, "call_1", Date.now()) // { ok: true, ... }
 */
export async function verifySubscribeToken(
  secret: string,
  token: string,
  invocationId: string,
  nowMs: number,
): Promise<TokenCheck> {
  const check = await verifySignedToken(secret, token, nowMs);
  if (!check.ok) return check;
  if (check.subject !== invocationId) return { ok: false, reason: "other_invocation" };
  return { ok: true, invocationId, expiresAt: check.expiresAt };
}
