/**
 * Text that has arrived but is not yet in the window, bounded: only the last
 * `keepUnits` UTF-16 units can still matter to the window, so older text is counted
 * (UTF-8 bytes and newlines, exactly) and let go.
 *
 * Why it exists: once a tail window is past its cap, every new chunk pushes older text
 * out. Feeding each 64 KiB chunk through the window costs per-character work on text
 * that will be dropped moments later. The backlog defers that work to publication time
 * (at most a few times per second) and hands the window only a suffix that is longer
 * than `maxBytes` bytes, which the window then cuts at a real line start (or mid-line,
 * as it would have anyway). See docs/decisions/032-sandbox-backpressure.md.
 */
export class TextBacklog {
  /** Units kept for the window (at least 1, so the window always sees the last character). */
  readonly keepUnits: number;
  /** UTF-8 bytes and "\n" count of text that was counted but never reached the window. */
  skippedBytes = 0;
  skippedNewlines = 0;
  private parts: string[] = [];
  private units = 0;

  /** @example const backlog = new TextBacklog(maxBytes + 1); */
  constructor(keepUnits: number) {
    this.keepUnits = keepUnits;
  }

  /** Adds `text`; whole parts that can no longer reach the window are counted and dropped. */
  push(text: string): void {
    this.parts.push(text);
    this.units += text.length;
    while (this.parts.length > 1 && this.units - this.parts[0]!.length >= this.keepUnits) {
      const first = this.parts.shift()!;
      this.units -= first.length;
      this.skip(first);
    }
  }

  /** True when text is waiting for the window. */
  get pending(): boolean {
    return this.units > 0;
  }

  /**
   * The waiting text, cut to its last `keepUnits` units (never between the halves of a
   * surrogate pair); what is cut is counted as skipped.
   */
  take(): string {
    const all = this.parts.length === 1 ? this.parts[0]! : this.parts.join("");
    this.parts = [];
    this.units = 0;
    let cut = Math.max(0, all.length - this.keepUnits);
    if (
      cut > 0 &&
      isLowSurrogate(all.charCodeAt(cut)) &&
      isHighSurrogate(all.charCodeAt(cut - 1))
    ) {
      cut--;
    }
    if (cut === 0) return all;
    this.skip(all.slice(0, cut));
    return all.slice(cut);
  }

  private skip(text: string): void {
    this.skippedBytes += Buffer.byteLength(text, "utf8");
    this.skippedNewlines += countNewlines(text);
  }
}

/**
 * "\n" count. `indexOf` is fastest when newlines are sparse, a plain scan when they are
 * dense (e.g. `yes`): start with the first and switch once lines prove short.
 */
export function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    n++;
    if (n === 64 && i < 64 * 32) {
      for (let j = i + 1; j < text.length; j++) if (text.charCodeAt(j) === 10) n++;
      return n;
    }
  }
  return n;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
