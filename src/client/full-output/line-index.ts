/**
 * A sparse index of line starts in a byte stream, so that line N of a file of any size
 * can be found by reading from a nearby offset instead of from the start. Fed the bytes
 * once, in order, in chunks of any size; keeps one checkpoint per `everyLines` lines or
 * `everyBytes` bytes, whichever comes first, so memory grows with the file's size
 * divided by the spacing (a gigabyte of short lines: ~100,000 checkpoints), never with
 * its contents.
 *
 * Lines are 1-based and end at `\n` (0x0A, which UTF-8 never uses inside a character);
 * a last line without a newline counts as a line.
 */

/** A line start: line `line` begins at byte `offset`. */
interface Checkpoint {
  line: number;
  offset: number;
}

export interface LineIndexSpacing {
  everyLines: number;
  everyBytes: number;
}

/** 1,000 lines or 256 KiB: a block is read in one or a few range requests. */
export const DEFAULT_SPACING: LineIndexSpacing = { everyLines: 1000, everyBytes: 256 * 1024 };

const NEWLINE = 0x0a;

export class LineIndex {
  readonly #spacing: LineIndexSpacing;
  readonly #lines: number[] = [1];
  readonly #offsets: number[] = [0];
  /** Bytes fed so far. */
  #scanned = 0;
  /** Newlines seen so far. */
  #newlines = 0;
  #lastByte = -1;
  #complete = false;

  constructor(spacing: LineIndexSpacing = DEFAULT_SPACING) {
    if (!(spacing.everyLines >= 1 && spacing.everyBytes >= 1)) {
      throw new RangeError("LineIndex spacing must be at least 1 line and 1 byte");
    }
    this.#spacing = spacing;
  }

  /** Bytes indexed so far. */
  get scanned(): number {
    return this.#scanned;
  }

  /** True once `finish()` was called: every line is known. */
  get complete(): boolean {
    return this.#complete;
  }

  /** Lines seen so far (the last, unfinished one included). */
  get lines(): number {
    return this.#newlines + (this.#scanned > 0 && this.#lastByte !== NEWLINE ? 1 : 0);
  }

  /** Number of checkpoints kept (memory use). */
  get checkpoints(): number {
    return this.#lines.length;
  }

  /**
   * Feeds the next bytes of the stream.
   * @example index.feed(new TextEncoder().encode("a\nb\n")); index.lines // 2
   */
  feed(bytes: Uint8Array): void {
    if (this.#complete) throw new Error("LineIndex.feed after finish()");
    const { everyLines, everyBytes } = this.#spacing;
    let at = bytes.indexOf(NEWLINE);
    while (at !== -1) {
      this.#newlines++;
      const nextStart = this.#scanned + at + 1;
      const line = this.#newlines + 1;
      const lastLine = this.#lines[this.#lines.length - 1] ?? 1;
      const lastOffset = this.#offsets[this.#offsets.length - 1] ?? 0;
      if (line - lastLine >= everyLines || nextStart - lastOffset >= everyBytes) {
        this.#lines.push(line);
        this.#offsets.push(nextStart);
      }
      at = bytes.indexOf(NEWLINE, at + 1);
    }
    if (bytes.length > 0) this.#lastByte = bytes[bytes.length - 1] ?? -1;
    this.#scanned += bytes.length;
  }

  /** Marks the end of the stream. */
  finish(): void {
    this.#complete = true;
  }

  /**
   * The checkpoint at or before line `line` (1-based).
   * @example index.before(1234) // { line: 1001, offset: 5893 }
   */
  before(line: number): Checkpoint {
    return this.#at(upperBound(this.#lines, line) - 1);
  }

  /** The checkpoint at or before byte `offset`. */
  beforeOffset(offset: number): Checkpoint {
    return this.#at(upperBound(this.#offsets, offset) - 1);
  }

  /** The first checkpoint after `checkpoint`, or null when it is the last. */
  after(checkpoint: Checkpoint): Checkpoint | null {
    const k = upperBound(this.#offsets, checkpoint.offset);
    return k < this.#offsets.length ? this.#at(k) : null;
  }

  #at(k: number): Checkpoint {
    const i = Math.max(0, k);
    return { line: this.#lines[i] ?? 1, offset: this.#offsets[i] ?? 0 };
  }
}

/** Index of the first element greater than `value` in an ascending array. */
function upperBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? 0) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
