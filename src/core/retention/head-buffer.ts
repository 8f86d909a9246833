import { type OnUnit, Utf8Segmenter, validRunEnd } from "./utf8-segmenter.ts";

const INITIAL_CAPACITY = 1024;

/**
 * The longest run of whole units from the start of a byte stream whose decoded size fits
 * `maxOut`. Keeps raw input bytes (never more than `maxOut + 4`) and closes as soon as
 * the budget is proven exceeded, which can be before the unit that overflows is complete.
 */
export class HeadBuffer {
  readonly maxOut: number;
  #buf: Uint8Array;
  /** Bytes stored: the kept units, then the unit in progress. */
  #len = 0;
  /** Input bytes of the units that fit. */
  #kept = 0;
  /** Decoded bytes of the units that fit. */
  #out = 0;
  #closed = false;
  readonly #seg = new Utf8Segmenter();
  readonly #onUnit: OnUnit = (inBytes, outBytes) => {
    if (this.#closed) return;
    if (this.#out + outBytes <= this.maxOut) {
      this.#out += outBytes;
      this.#kept += inBytes;
    } else this.#closed = true;
  };

  constructor(maxOut: number) {
    this.maxOut = maxOut;
    this.#buf = new Uint8Array(Math.min(maxOut + 4, INITIAL_CAPACITY));
  }

  /** The budget has been proven exceeded; nothing more is kept. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Input bytes kept. */
  get keptBytes(): number {
    return this.#kept;
  }

  /** Bytes of memory held. */
  get allocatedBytes(): number {
    return this.#buf.byteLength;
  }

  /**
   * Consume bytes from `chunk` until the head closes. Returns how many were consumed;
   * after closing, `overflow()` holds the consumed bytes that were not kept.
   */
  write(chunk: Uint8Array): number {
    let i = 0;
    while (i < chunk.length && !this.#closed) {
      if (this.#seg.pending === 0) {
        // Fast path: a run of valid characters that fits is kept as is.
        const j = validRunEnd(chunk, i, this.maxOut - this.#out);
        if (j > i) {
          this.#appendRun(chunk.subarray(i, j));
          this.#out += j - i;
          this.#kept += j - i;
          i = j;
          continue;
        }
      }
      const b = chunk[i++]!;
      this.#append(b);
      this.#seg.feed(b, this.#onUnit);
      // Whatever the unit in progress turns out to be, it cannot fit: close now.
      if (
        !this.#closed &&
        this.#seg.pending > 0 &&
        this.#out + this.#seg.pendingMinOut > this.maxOut
      ) {
        this.#closed = true;
      }
    }
    return i;
  }

  /** End of input: an unfinished sequence is kept as U+FFFD if 3 bytes still fit. */
  end(): void {
    if (this.#closed) return;
    this.#seg.end(this.#onUnit);
    this.#closed = true;
  }

  /** Consumed bytes past the kept units: the start of what did not fit. */
  overflow(): Uint8Array {
    return this.#buf.subarray(this.#kept, this.#len);
  }

  /** The kept units, decoded. */
  text(decoder: TextDecoder): string {
    return decoder.decode(this.#buf.subarray(0, this.#kept));
  }

  #append(b: number): void {
    this.#reserve(1);
    this.#buf[this.#len++] = b;
  }

  #appendRun(run: Uint8Array): void {
    this.#reserve(run.length);
    this.#buf.set(run, this.#len);
    this.#len += run.length;
  }

  /** Grow by doubling, never past `maxOut + 4` (kept units, a 3-byte partial and one more byte). */
  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const size = Math.min(this.maxOut + 4, Math.max(this.#buf.length * 2, this.#len + n));
    const grown = new Uint8Array(size);
    grown.set(this.#buf.subarray(0, this.#len));
    this.#buf = grown;
  }
}
