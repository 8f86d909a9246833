/**
 * Bearer tokens and secret comparison, shared by the Worker (API_TOKEN, subscribe-token
 * signatures) and the sandbox host (SANDBOX_TOKEN). WebCrypto only, so the same code runs
 * in the Workers runtime and in Node.
 */
const utf8 = new TextEncoder();

/**
 * The token of an `Authorization: Bearer <token>` header, or null when the header has
 * another form (RFC 6750: the scheme, spaces, one token).
 * @example bearerToken("Bearer s3cret") // "s3cret"
 */
export function bearerToken(header: string): string | null {
  return /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? null;
}

/**
 * Equal-length byte comparison whose time depends only on the length: every byte is
 * compared, with no early exit (HMAC signatures, digests).
 * @example bytesEqual(expectedSig, presentedSig)
 */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < a.byteLength; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/**
 * True when `presented` is the `expected` secret. Both are hashed to 32 bytes first, so
 * neither the secret's length nor its first differing byte shows in the time taken.
 * @example await secretMatches(token, env.API_TOKEN) // true or false
 */
export async function secretMatches(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(presented), digest(expected)]);
  return bytesEqual(a, b);
}

async function digest(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(value)));
}
