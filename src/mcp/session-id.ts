/**
 * Stateless 2025-11-25 session ids (docs/decisions/101): `ms1.<random>.<MAC>`, the MAC
 * an HMAC-SHA256 of the random part under a Worker secret. Any isolate can check one
 * without a lookup; nothing but termination is stored per session.
 */
import { bytesEqual, hmacSha256, toBase64Url } from "../protocol/index.ts";

const utf8 = new TextEncoder();
const PREFIX = "ms1";

async function mac(secret: string, nonce: string): Promise<string> {
  return toBase64Url(await hmacSha256(secret, `toolwire-mcp-session:v1:${nonce}`));
}

/** Whether two strings are the same, compared without an early exit. */
function sameText(a: string, b: string): boolean {
  return bytesEqual(utf8.encode(a), utf8.encode(b));
}

/**
 * A new session id signed with `secret`.
 * @example await mintSessionId(secret) // "ms1.q3….Zx…"
 */
export async function mintSessionId(secret: string): Promise<string> {
  const nonce = toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
  return `${PREFIX}.${nonce}.${await mac(secret, nonce)}`;
}

/**
 * Whether `id` is a session id this Worker issued (signed with `secret`).
 * @example await isIssuedSessionId(secret, "ms1.forged.x") // false
 */
export async function isIssuedSessionId(secret: string, id: string): Promise<boolean> {
  const parts = id.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX) return false;
  const [, nonce = "", presented = ""] = parts;
  if (!/^[A-Za-z0-9_-]{24}$/.test(nonce)) return false;
  return sameText(await mac(secret, nonce), presented);
}
