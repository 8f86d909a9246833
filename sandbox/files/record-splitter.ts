/**
 * Splits a byte stream (a child's stdout) into records ended by one separator byte,
 * keeping at most `maxBytes` of each record: memory stays bounded whatever the stream's
 * shape (one endless line, no separator at all, any bytes), and a record longer than the
 * cap still arrives, as its head with its whole length.
 */

/** One record: its first bytes, and how long it really was. */
export interface SplitRecord {
  /** The record's first bytes (at most the splitter's `maxBytes`), without the separator. */
  head: Buffer;
  /** The record's whole length in bytes; more than `head.length` when it was cut. */
  bytes: number;
}

/**
 * @example
 * const split = new RecordSplitter(0x0a, 8192, (r) => { lines.push(r.head.toString()); return true; });
 * split.push(chunk); split.end();
 */
export class RecordSplitter {
  readonly #separator: number;
  readonly #maxBytes: number;
  readonly #onRecord: (record: SplitRecord) => boolean;
  #parts: Buffer[] = [];
  #kept = 0;
  #bytes = 0;
  #stopped = false;

  /** `onRecord` answers false to stop: later bytes are ignored. */
  constructor(separator: number, maxBytes: number, onRecord: (record: SplitRecord) => boolean) {
    this.#separator = separator;
    this.#maxBytes = maxBytes;
    this.#onRecord = onRecord;
  }

  /** Whether `onRecord` asked to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Feeds the next bytes; false once stopped. */
  push(chunk: Buffer): boolean {
    let start = 0;
    while (!this.#stopped && start < chunk.length) {
      const at = chunk.indexOf(this.#separator, start);
      const end = at === -1 ? chunk.length : at;
      this.#keep(chunk.subarray(start, end));
      if (at === -1) break;
      this.#emit();
      start = at + 1;
    }
    return !this.#stopped;
  }

  /** The stream ended: a last record without its separator is still one. */
  end(): void {
    if (!this.#stopped && this.#bytes > 0) this.#emit();
  }

  #keep(piece: Buffer): void {
    this.#bytes += piece.length;
    const room = this.#maxBytes - this.#kept;
    if (room <= 0 || piece.length === 0) return;
    // A copy: the head must not pin the whole chunk it came in.
    const kept = Buffer.from(piece.subarray(0, room));
    this.#parts.push(kept);
    this.#kept += kept.length;
  }

  #emit(): void {
    const record = { head: Buffer.concat(this.#parts, this.#kept), bytes: this.#bytes };
    this.#parts = [];
    this.#kept = 0;
    this.#bytes = 0;
    if (!this.#onRecord(record)) this.#stopped = true;
  }
}
