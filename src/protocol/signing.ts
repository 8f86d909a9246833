/**
 * HMAC-SHA256 signatures and their base64url text, shared by the Worker's subscribe
 * tokens (src/worker/subscribe-token.ts) and the MCP session ids (src/mcp/session-id.ts).
 * WebCrypto only, so it runs in the Workers runtime and in Node.
 */
const utf8 = new TextEncoder();

/**
 * The HMAC-SHA256 of `message` under `secret` (32 bytes).
 * @example await hmacSha256("s3cret", "toolwire-subscribe:v1:call_1:1764000000")
 */
export async function hmacSha256(secret: string, message: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    utf8.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8.encode(message)));
}

/**
 * Bytes as unpadded base64url (RFC 4648 §5).
 * @example toBase64Url(new Uint8Array([251, 255])) // "-_8"
 */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
