/**
 * Secret comparison that takes the same time whatever the inputs: both sides are hashed
 * to 32 bytes first, so neither the length nor the first differing byte of the expected
 * secret leaks through timing.
 */
const encoder = new TextEncoder();

/**
 * `timingSafeEqual` is a Workers extension of WebCrypto. Typed here rather than taken from
 * the global type so that Node-side code that mints tokens (tests) still type-checks.
 */
const subtle = crypto.subtle as SubtleCrypto & {
  timingSafeEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean;
};

async function digest(value: string): Promise<ArrayBuffer> {
  return subtle.digest("SHA-256", encoder.encode(value));
}

/**
 * True when `a` and `b` are the same string.
 * @example await constantTimeEqual(presented, env.API_TOKEN) // true or false
 */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([digest(a), digest(b)]);
  return subtle.timingSafeEqual(da, db);
}

/**
 * Byte comparison in constant time for equal-length inputs (HMAC signatures).
 * @example bytesEqual(expectedSig, presentedSig)
 */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && subtle.timingSafeEqual(a, b);
}
