/**
 * Deterministic log-like text for the benches: printable ASCII with a newline about every
 * 41 characters (xorshift32 from `seed`).
 * @example makeText(50 * 1024, 1).length // 51200
 */
export function makeText(length: number, seed: number): string {
  let x = seed >>> 0 || 1;
  let out = "";
  while (out.length < length) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const n = x >>> 0;
    out += n % 41 === 0 ? "\n" : String.fromCharCode(32 + (n % 95));
  }
  return out;
}
