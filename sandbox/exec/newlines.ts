/**
 * Number of "\n" bytes in `bytes`. `indexOf` (memchr) wins when lines are long; once
 * lines prove short (e.g. `yes`), a word-at-a-time scan takes over: each 32-bit word is
 * XORed with "\n\n\n\n", its zero bytes marked without a branch per byte, and the marks
 * summed per byte lane, folded into the count every 254 words.
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
  const pairs = ((end - i) >>> 3) << 1;
  // No whole words left (the scan above may have stopped short of a boundary at the end).
  if (pairs === 0) {
    while (i < end) if (bytes[i++] === 10) n++;
    return n;
  }
  const view = new Int32Array(bytes.buffer, bytes.byteOffset + i, pairs);
  let w = 0;
  while (w < pairs) {
    // Per-byte counters in one int: at most 254 words (2 per step) keep each below 256.
    const stop = Math.min(pairs, w + 254);
    let acc = 0;
    for (; w < stop; w += 2) acc += newlineBytes(view[w]!) + newlineBytes(view[w + 1]!);
    n += (acc & 0xff) + ((acc >>> 8) & 0xff) + ((acc >>> 16) & 0xff) + (acc >>> 24);
  }
  i += pairs * 4;
  while (i < end) if (bytes[i++] === 10) n++;
  return n;
}

/** 1 in each byte of the result whose byte in `word` is "\n", 0 elsewhere (exact, no borrow). */
function newlineBytes(word: number): number {
  const v = word ^ 0x0a0a0a0a;
  return (~(((v & 0x7f7f7f7f) + 0x7f7f7f7f) | v) >>> 7) & 0x01010101;
}
