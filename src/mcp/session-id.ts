/**
 * Stateless 2025-11-25 session ids (docs/decisions/101): `ms1.<random>.<MAC>`, the MAC
 * an HMAC-SHA256 of the random part under a Worker secret. Any isolate can check one
 * without a lookup; nothing but termination is stored per session.
 */

const encoder = new TextEncoder();
const PREFIX = "ms1";

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function mac(secret: string, nonce: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const sig = await crypto.subtle.sign(
    "HMAC",
    key,
    encoder.encode(`toolwire-mcp-session:v1:${nonce}`),
  );
  return base64Url(new Uint8Array(sig));
}

/** Same-length strings compared without an early exit. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * A new session id signed with `secret`.
 * @example await mintSessionId(secret) // "ms1.q3….Zx…"
 */
export async function mintSessionId(secret: string): Promise<string> {
  const nonce = base64Url(crypto.getRandomValues(new Uint8Array(18)));
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
