/** Called once per decoded character: input bytes it spans, UTF-8 bytes it decodes to. */
export type OnUnit = (inBytes: number, outBytes: number) => void;

/**
 * Splits a byte stream into the units a WHATWG UTF-8 decoder (`TextDecoder`) produces:
 * a valid character, or one U+FFFD for an invalid byte or a maximal incomplete sequence.
 * An invalid unit spans 1–3 input bytes but decodes to 3 bytes, which is why budgets are
 * checked against `outBytes`. The decoder state resets at every unit boundary, so
 * decoding any run of whole units on its own gives exactly those units' characters.
 * @example
 * const seg = new Utf8Segmenter();
 * for (const b of [0x61, 0xe2, 0x82]) seg.feed(b, (i, o) => console.log(i, o)); // 1 1
 * seg.end((i, o) => console.log(i, o)); // 2 3 (incomplete "€" at the end)
 */
export class Utf8Segmenter {
  #needed = 0;
  #seen = 0;
  #lower = 0x80;
  #upper = 0xbf;

  /** Bytes of the unit in progress (0 between units). */
  get pending(): number {
    return this.#needed === 0 ? 0 : this.#seen + 1;
  }

  /**
   * The fewest output bytes the unit in progress can decode to: a 2-byte lead gives 2
   * (or 3 as U+FFFD), any other lead at least 3. Only meaningful while `pending > 0`.
   */
  get pendingMinOut(): number {
    return this.#needed === 1 ? 2 : 3;
  }

  feed(b: number, onUnit: OnUnit): void {
    if (this.#needed !== 0) {
      if (b >= this.#lower && b <= this.#upper) {
        this.#lower = 0x80;
        this.#upper = 0xbf;
        if (++this.#seen === this.#needed) {
          const width = this.#needed + 1;
          this.#needed = 0;
          this.#seen = 0;
          onUnit(width, width);
        }
        return;
      }
      // The sequence broke off: it becomes one U+FFFD and `b` starts afresh.
      const width = this.#seen + 1;
      this.#reset();
      onUnit(width, 3);
    }
    if (b < 0x80) onUnit(1, 1);
    else if (b >= 0xc2 && b <= 0xdf) this.#needed = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      if (b === 0xe0) this.#lower = 0xa0;
      else if (b === 0xed) this.#upper = 0x9f;
      this.#needed = 2;
    } else if (b >= 0xf0 && b <= 0xf4) {
      if (b === 0xf0) this.#lower = 0x90;
      else if (b === 0xf4) this.#upper = 0x8f;
      this.#needed = 3;
    } else onUnit(1, 3);
  }

  /** End of input: an unfinished sequence becomes one U+FFFD. */
  end(onUnit: OnUnit): void {
    const width = this.pending;
    this.#reset();
    if (width > 0) onUnit(width, 3);
  }

  #reset(): void {
    this.#needed = 0;
    this.#seen = 0;
    this.#lower = 0x80;
    this.#upper = 0xbf;
  }
}

/**
 * End of the longest run of complete, valid characters in `bytes` starting at `from`
 * (a unit boundary) that fits in `maxBytes`. Valid characters decode to themselves, so
 * such a run can be kept without per-unit bookkeeping; the run stops before anything
 * invalid, unfinished or too big.
 * @example validRunEnd(new TextEncoder().encode("aé€"), 0, 4) // 3: "aé" fits, "€" does not
 */
export function validRunEnd(bytes: Uint8Array, from: number, maxBytes: number): number {
  const limit = Math.min(bytes.length, from + maxBytes);
  let i = from;
  while (i < limit) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let width: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) width = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      width = 3;
      if (b === 0xe0) lower = 0xa0;
      else if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      width = 4;
      if (b === 0xf0) lower = 0x90;
      else if (b === 0xf4) upper = 0x8f;
    } else break;
    if (i + width > limit) break;
    const second = bytes[i + 1]!;
    if (second < lower || second > upper) break;
    if (width > 2 && (bytes[i + 2]! & 0xc0) !== 0x80) break;
    if (width > 3 && (bytes[i + 3]! & 0xc0) !== 0x80) break;
    i += width;
  }
  return i;
}
