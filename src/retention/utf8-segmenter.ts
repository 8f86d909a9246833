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
