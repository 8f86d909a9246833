import { type OnUnit, Utf8Segmenter } from "./utf8-segmenter.ts";

const INITIAL_CAPACITY = 1024;

/** A unit never spans more than 4 bytes: 3 bytes before a tail settle where its first unit starts. */
const SYNC_BYTES = 3;

/**
 * The last bytes of a stream in a ring of `maxOut + 3` bytes: enough for any tail whose
 * decoded size fits `maxOut` (a unit never decodes to fewer bytes than it spans) plus
 * the 3 bytes before it that show where its first unit starts. The ring grows by
 * doubling up to that size, then overwrites in place; memory never depends on how
 * much passes through.
 */
export class TailRing {
  readonly maxOut: number;
  readonly capacity: number;
  #buf: Uint8Array;
  /** Index of the oldest byte once the ring has wrapped (0 before). */
  #start = 0;
  #len = 0;
  #total = 0;

  constructor(maxOut: number) {
    this.maxOut = maxOut;
    this.capacity = maxOut + SYNC_BYTES;
    this.#buf = new Uint8Array(Math.min(this.capacity, INITIAL_CAPACITY));
  }

  /** Bytes ever written or skipped. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes of memory held. */
  get allocatedBytes(): number {
    return this.#buf.byteLength;
  }

  write(chunk: Uint8Array): void {
    this.#total += chunk.length;
    let src = chunk;
    if (src.length > this.capacity) src = src.subarray(src.length - this.capacity);
    if (this.#buf.length < this.capacity && this.#len + src.length > this.#buf.length) {
      this.#grow(Math.min(this.capacity, Math.max(this.#buf.length * 2, this.#len + src.length)));
    }
    const cap = this.#buf.length;
    const at = (this.#start + this.#len) % cap;
    const first = Math.min(src.length, cap - at);
    this.#buf.set(src.subarray(0, first), at);
    this.#buf.set(src.subarray(first), 0);
    const len = this.#len + src.length;
    if (len > cap) {
      this.#start = (this.#start + len - cap) % cap;
      this.#len = cap;
    } else this.#len = len;
  }

  /** Count `n` bytes that pass unseen; the caller then writes at least `capacity` bytes. */
  skip(n: number): void {
    this.#total += n;
  }

  /**
   * The longest tail of whole units whose decoded size fits `maxOut`; `whole` instead
   * allows everything to be kept when `fitsWhole(decodedSize)` says so and nothing was
   * dropped. Returns the decoded text and the input bytes it spans.
   */
  tail(
    decoder: TextDecoder,
    fitsWhole: (decodedSize: number) => boolean,
  ): { text: string; keptBytes: number } {
    const bytes = this.#contents();
    const dropped = this.#total > bytes.length;
    // A window that begins inside a character sees its first bytes as stray continuation
    // bytes. That only misreads the window's first 3 bytes: the first lead byte, or else
    // the 4th byte, starts a unit either way. A tail of `maxOut` bytes never reaches back
    // into them, so scanning from 0 is exact where it matters.
    const size = decodedSize(bytes);
    const budget = !dropped && fitsWhole(size) ? size : this.maxOut;
    const start = suffixStart(bytes, size, budget);
    return { text: decoder.decode(bytes.subarray(start)), keptBytes: bytes.length - start };
  }

  #contents(): Uint8Array {
    const out = new Uint8Array(this.#len);
    const cap = this.#buf.length;
    const first = Math.min(this.#len, cap - this.#start);
    out.set(this.#buf.subarray(this.#start, this.#start + first));
    out.set(this.#buf.subarray(0, this.#len - first), first);
    return out;
  }

  #grow(size: number): void {
    // Growth only happens before the first wrap, while the bytes are still in order.
    const grown = new Uint8Array(size);
    grown.set(this.#buf.subarray(0, this.#len));
    this.#buf = grown;
    this.#start = 0;
  }
}

/** Decoded size of all units (an unfinished last one counts as U+FFFD). */
function decodedSize(bytes: Uint8Array): number {
  let size = 0;
  const onUnit: OnUnit = (_in, out) => {
    size += out;
  };
  const seg = new Utf8Segmenter();
  for (let i = 0; i < bytes.length; i++) seg.feed(bytes[i]!, onUnit);
  seg.end(onUnit);
  return size;
}

/** Where the longest suffix of whole units decoding to at most `budget` bytes starts. */
function suffixStart(bytes: Uint8Array, size: number, budget: number): number {
  let remaining = size;
  let at = 0;
  if (remaining <= budget) return at;
  let found = false;
  const onUnit: OnUnit = (inBytes, outBytes) => {
    if (found) return;
    at += inBytes;
    remaining -= outBytes;
    if (remaining <= budget) found = true;
  };
  const seg = new Utf8Segmenter();
  for (let i = 0; i < bytes.length && !found; i++) seg.feed(bytes[i]!, onUnit);
  if (!found) seg.end(onUnit);
  return at;
}
