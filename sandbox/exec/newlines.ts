/**
 * Number of "\n" bytes in `bytes`. `indexOf` (memchr) wins when lines are long; once
 * lines prove short (e.g. `yes`), a word-at-a-time scan takes over: each 32-bit word is
 * XORed with "\n\n\n\n" and its zero bytes counted without a branch per byte.
 * @example countNewlines(Buffer.from("a\nb\n")) // 2
 */
export function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  let i = bytes.indexOf(10);
  while (i !== -1) {
    n++;
    if (n === 64 && i < 64 * 32) return n + countDense(bytes, i + 1);
    i = bytes.indexOf(10, i + 1);
  }
  return n;
}

function countDense(bytes: Uint8Array, from: number): number {
  let n = 0;
  let i = from;
  const end = bytes.length;
  // Bytes until the next 4-byte boundary of the underlying buffer.
  while (i < end && (bytes.byteOffset + i) % 4 !== 0) if (bytes[i++] === 10) n++;
  const words = (end - i) >>> 2;
  if (words > 0) {
    const view = new Int32Array(bytes.buffer, bytes.byteOffset + i, words);
    for (let w = 0; w < words; w++) {
      const v = view[w]! ^ 0x0a0a0a0a;
      // High bit set in each byte of `zero` whose byte in `v` is 0 (exact, no borrow).
      const zero = ~(((v & 0x7f7f7f7f) + 0x7f7f7f7f) | v | 0x7f7f7f7f);
      n += Math.imul((zero >>> 7) & 0x01010101, 0x01010101) >>> 24;
    }
    i += words * 4;
  }
  while (i < end) if (bytes[i++] === 10) n++;
  return n;
}
