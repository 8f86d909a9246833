/**
 * `TextWindow`: bounds appended text by a head or tail policy in bytes and lines, and keeps
 * exact totals of everything appended. See docs/decisions/020-line-counting-and-windows.md.
 *
 * Lines: a line is a run of text ended by "\n" (the "\n" belongs to the line, so its
 * bytes count towards the line), plus a final run without "\n" if it is non-empty.
 * `"" → 0`, `"a" → 1`, `"a\n" → 1`, `"a\nb" → 2`, `"\n\n" → 2`. "\r" is ordinary content,
 * so "\r\n" is one break however the two units are split across writes.
 *
 * Cost: `append` is proportional to the appended text plus what it drops; the retained
 * text is kept as a `TextQueue` and a queue of line starts, never re-scanned.
 *
 * The byte face of the same engine is `TextRetainer`: both cut with the UTF-8 helpers of
 * `src/core/retention/utf8.ts` and keep text in `src/core/retention` buffers; this module adds
 * only what lines need (decision 015).
 */
import { TextQueue } from "../retention/text-queue.ts";
import { utf8ByteLength, utf8HeadCut } from "../retention/utf8.ts";
import type { OutputPolicy, Truncation } from "./types.ts";

/** What changed in the retained text: `next = prev.slice(drop) + append`. */
interface WindowChange {
  /** UTF-16 code units removed from the start of the retained text (always 0 in head mode). */
  drop: number;
  /** Text added at the end of the retained text. */
  append: string;
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/**
 * Number of lines in `text` (see the module comment).
 * @example countLines("a\r\nb\n") // 2
 */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  const n = countNewlines(text);
  return text.charCodeAt(text.length - 1) === 10 ? n : n + 1;
}

/**
 * Throws a `RangeError` unless `policy` is `{ retain: "head" | "tail", maxBytes, maxLines }`
 * with non-negative integer caps.
 */
function assertOutputPolicy(policy: OutputPolicy): void {
  if (policy === null || typeof policy !== "object") {
    throw new TypeError("Output policy must be an object { retain, maxBytes, maxLines }.");
  }
  if (policy.retain !== "head" && policy.retain !== "tail") {
    throw new RangeError(
      `Output policy retain must be "head" or "tail", got ${JSON.stringify(policy.retain)}.`,
    );
  }
  for (const key of ["maxBytes", "maxLines"] as const) {
    const v = policy[key];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      throw new RangeError(
        `Output policy ${key} must be a non-negative integer, got ${String(v)}.`,
      );
    }
  }
}

/** Line starts (absolute unit and byte positions) as a queue. */
class LineStarts {
  #units: number[] = [];
  #bytes: number[] = [];
  #first = 0;

  get size(): number {
    return this.#units.length - this.#first;
  }
  push(unit: number, byte: number): void {
    this.#units.push(unit);
    this.#bytes.push(byte);
  }
  peekUnit(): number | undefined {
    return this.#first < this.#units.length ? this.#units[this.#first]! : undefined;
  }
  peekByte(): number {
    return this.#bytes[this.#first]!;
  }
  shift(): void {
    this.#first++;
    if (this.#first > 64 && this.#first * 2 > this.#units.length) {
      this.#units = this.#units.slice(this.#first);
      this.#bytes = this.#bytes.slice(this.#first);
      this.#first = 0;
    }
  }
  clear(): void {
    this.#units = [];
    this.#bytes = [];
    this.#first = 0;
  }
}

/**
 * A window over appended text, bounded by `{ retain, maxBytes, maxLines }`, with exact
 * totals of everything appended (decision 020).
 *
 * - **tail**: keeps the longest suffix that starts at a line start and holds at most
 *   `maxLines` lines and `maxBytes` bytes. When the last line alone is over `maxBytes`, keeps
 *   the last `maxBytes` bytes of it (`lastLinePartial`).
 * - **head**: keeps the longest prefix within both caps (cut by bytes mid-line if need be);
 *   once something is cut, later text is only counted.
 *
 * Cuts never split a UTF-8 character; a trailing lone high surrogate is held back until the
 * next append tells whether it starts a pair (it is counted in the totals meanwhile).
 *
 * @example
 * const w = new TextWindow({ retain: "tail", maxBytes: 8, maxLines: 2 });
 * w.append("one\ntwo\n");   // { drop: 0, append: "one\ntwo\n" }
 * w.append("six\n");        // { drop: 4, append: "six\n" }: w.text === "two\nsix\n"
 */
export class TextWindow {
  readonly policy: Readonly<OutputPolicy>;
  readonly #chunks = new TextQueue();
  /** A lone high surrogate held back from the end of the text. */
  #pending = "";

  // Totals of everything appended (absolute positions count from the last `replace`).
  #end = 0;
  #endByte = 0;
  #newlines = 0;
  /** The line start after the last "\n", and the one before it. */
  #lastBreak = 0;
  #prevBreak = 0;

  // Tail: the retained text is [start, end); `starts` holds the line starts in (start, end].
  readonly #starts = new LineStarts();
  #start = 0;
  #startByte = 0;
  /** The retained text starts inside the last line (its head was cut by bytes). */
  #midLine = false;

  // Head: measures of the retained text, and the cut once one happened.
  #headUnits = 0;
  #headBytes = 0;
  #headNewlines = 0;
  #headEndsWithNewline = false;
  #cutBy: "lines" | "bytes" | null = null;

  // After `resume`: what was appended before the resumed text, and whether it was cut.
  #priorLines = 0;
  #priorBytes = 0;
  #priorCut = false;

  constructor(policy: OutputPolicy) {
    assertOutputPolicy(policy);
    this.policy = { retain: policy.retain, maxBytes: policy.maxBytes, maxLines: policy.maxLines };
  }

  /** The retained text. */
  get text(): string {
    return this.#chunks.text();
  }

  /** Length of the retained text in UTF-16 units. */
  get length(): number {
    return this.policy.retain === "head" ? this.#headUnits : this.#end - this.#start;
  }

  /**
   * Appends `text`; returns how the retained text changed.
   * @example new TextWindow({ retain: "head", maxBytes: 3, maxLines: 9 }).append("abcd") // { drop: 0, append: "abc" }
   */
  append(text: string): WindowChange {
    const x = this.#admit(text);
    if (this.policy.retain === "head") return { drop: 0, append: this.#appendHead(x) };
    return this.#appendTail(x);
  }

  /**
   * Starts over with `text` as everything appended so far (totals restart too).
   * @example w.replace("fresh") // { drop: <old length>, append: "fresh" } when it fits
   */
  replace(text: string): WindowChange {
    const drop = this.length;
    this.#chunks.clear();
    this.#starts.clear();
    this.#pending = "";
    this.#end = this.#endByte = this.#newlines = this.#lastBreak = this.#prevBreak = 0;
    this.#start = this.#startByte = 0;
    this.#midLine = false;
    this.#headUnits = this.#headBytes = this.#headNewlines = 0;
    this.#headEndsWithNewline = false;
    this.#cutBy = null;
    this.#priorLines = this.#priorBytes = 0;
    this.#priorCut = false;
    return { drop, append: this.append(text).append };
  }

  /**
   * Continues from a retained `text` and the truncation recorded with it (after a restart):
   * later appends add to those totals, and a cut stays a cut.
   * @example w.resume(state.content[0].text, state.truncation)
   */
  resume(text: string, truncation: Truncation): void {
    this.replace(text);
    const own = this.truncation();
    this.#priorLines = Math.max(0, truncation.totalLines - own.totalLines);
    this.#priorBytes = Math.max(0, truncation.totalBytes - own.totalBytes);
    if (!truncation.truncated || own.truncated) return;
    if (this.policy.retain === "head") this.#cutBy = truncation.truncatedBy ?? "bytes";
    else {
      this.#priorCut = true;
      this.#midLine = truncation.lastLinePartial;
    }
  }

  /**
   * Removes `drop` units from the start of the retained text as a source decided (the
   * totals keep them), then appends `text` under the policy. The new start counts as a
   * line start. Throws a `RangeError` and changes nothing if `drop` is not an integer in
   * `[0, length]` or would split a surrogate pair.
   * @example w.slide(4, "next\n")
   */
  slide(drop: number, text: string): WindowChange {
    if (!Number.isSafeInteger(drop) || drop < 0 || drop > this.length) {
      throw new RangeError(
        `slide drop must be an integer from 0 to the retained length ${this.length}, got ${String(drop)}.`,
      );
    }
    if (this.#chunks.splitsPair(drop)) {
      throw new RangeError(`slide drop ${drop} would split a surrogate pair.`);
    }
    if (drop > 0) {
      const gone = this.#chunks.drop(drop);
      if (this.policy.retain === "head") {
        this.#headUnits -= drop;
        this.#headBytes -= gone.bytes;
        this.#headNewlines -= gone.newlines;
        if (this.#headUnits === 0) this.#headEndsWithNewline = false;
      } else {
        this.#start += drop;
        this.#startByte += gone.bytes;
        this.#shiftStartsUpTo(this.#start);
        this.#midLine = false;
      }
    }
    const change = this.append(text);
    return { drop: drop + change.drop, append: change.append };
  }

  /** Totals of everything appended and measures of the retained text. */
  truncation(): Truncation {
    const { maxBytes, maxLines } = this.policy;
    const endsWithNewline = this.#end > 0 && this.#lastBreak === this.#end;
    const totalLines =
      this.#priorLines +
      this.#newlines +
      (this.#pending !== "" || (this.#end > 0 && !endsWithNewline) ? 1 : 0);
    const totalBytes = this.#priorBytes + this.#endByte + (this.#pending !== "" ? 3 : 0);
    if (this.policy.retain === "head") {
      const truncated = this.#cutBy !== null;
      const partial = this.#headUnits > 0 && !this.#headEndsWithNewline;
      return {
        truncated,
        truncatedBy: this.#cutBy,
        totalLines,
        totalBytes,
        outputLines: this.#headNewlines + (partial ? 1 : 0),
        outputBytes: this.#headBytes,
        maxLines,
        maxBytes,
        lastLinePartial: truncated && partial,
        firstLineExceedsLimit: this.#cutBy === "bytes" && this.#headNewlines === 0,
      };
    }
    const outputLines = this.#starts.size + (this.#start < this.#end && !endsWithNewline ? 1 : 0);
    const truncated = this.#start > 0 || this.#priorCut;
    let truncatedBy: Truncation["truncatedBy"] = null;
    if (truncated) truncatedBy = !this.#midLine && outputLines >= maxLines ? "lines" : "bytes";
    return {
      truncated,
      truncatedBy,
      totalLines,
      totalBytes,
      outputLines,
      outputBytes: this.#endByte - this.#startByte,
      maxLines,
      maxBytes,
      lastLinePartial: truncated && this.#midLine,
      firstLineExceedsLimit: false,
    };
  }

  /** Holds back a trailing lone high surrogate so no stored chunk ends inside a pair. */
  #admit(text: string): string {
    let x = this.#pending + text;
    this.#pending = "";
    if (x.length > 0 && isHigh(x.charCodeAt(x.length - 1))) {
      this.#pending = x.slice(-1);
      x = x.slice(0, -1);
    }
    return x;
  }

  /** Adds `x` to the totals; in tail mode also records its line starts. */
  #measure(x: string): void {
    const tail = this.policy.retain === "tail";
    let from = 0;
    let byte = this.#endByte;
    for (let nl = x.indexOf("\n"); nl !== -1; nl = x.indexOf("\n", nl + 1)) {
      byte += utf8ByteLength(x, from, nl + 1);
      from = nl + 1;
      this.#newlines++;
      this.#prevBreak = this.#lastBreak;
      this.#lastBreak = this.#end + from;
      if (tail) this.#starts.push(this.#end + from, byte);
    }
    this.#endByte = byte + utf8ByteLength(x, from, x.length);
    this.#end += x.length;
  }

  #appendTail(x: string): WindowChange {
    const oldStart = this.#start;
    const oldEnd = this.#end;
    this.#measure(x);
    this.#chunks.push(x);
    this.#settleTail();
    if (this.#start <= oldEnd) return { drop: this.#start - oldStart, append: x };
    return { drop: oldEnd - oldStart, append: x.slice(this.#start - oldEnd) };
  }

  /** Moves the start forward to the earliest position the tail rules allow. */
  #settleTail(): void {
    const { maxBytes, maxLines } = this.policy;
    if (maxLines === 0) {
      const gone = this.#chunks.drop(this.#end - this.#start);
      this.#start = this.#end;
      this.#startByte += gone.bytes;
      this.#shiftStartsUpTo(this.#start);
      return;
    }
    const endsWithNewline = this.#end > 0 && this.#lastBreak === this.#end;
    const lastLineStart = endsWithNewline ? this.#prevBreak : this.#lastBreak;
    for (;;) {
      const lines = this.#starts.size + (this.#start < this.#end && !endsWithNewline ? 1 : 0);
      const bytes = this.#endByte - this.#startByte;
      // A start left inside a line that is no longer the last one must move to a line start.
      const stranded = this.#midLine && this.#start < lastLineStart;
      if (lines <= maxLines && bytes <= maxBytes && !stranded) return;
      const next = this.#starts.peekUnit();
      if (next !== undefined && next <= lastLineStart) {
        this.#chunks.drop(next - this.#start);
        this.#start = next;
        this.#startByte = this.#starts.peekByte();
        this.#starts.shift();
        this.#midLine = false;
        continue;
      }
      // The start is in the last line, which alone is over maxBytes: keep its last bytes.
      const gone = this.#chunks.dropBytes(bytes - maxBytes);
      this.#start += gone.units;
      this.#startByte += gone.bytes;
      this.#shiftStartsUpTo(this.#start);
      this.#midLine = true;
      return;
    }
  }

  #shiftStartsUpTo(unit: number): void {
    for (
      let s = this.#starts.peekUnit();
      s !== undefined && s <= unit;
      s = this.#starts.peekUnit()
    ) {
      this.#starts.shift();
    }
  }

  /** Head: keeps what fits of `x` and returns it; once something was cut, only counts. */
  #appendHead(x: string): string {
    this.#measure(x);
    if (this.#cutBy !== null || x.length === 0) return "";
    const { maxBytes, maxLines } = this.policy;
    const room = maxLines - this.#headNewlines;
    let linesCut = room <= 0 ? 0 : x.length;
    let seen = 0;
    for (let nl = x.indexOf("\n"); room > 0 && nl !== -1; nl = x.indexOf("\n", nl + 1)) {
      if (++seen === room) {
        linesCut = nl + 1;
        break;
      }
    }
    const { end: bytesCut, bytes: used } = utf8HeadCut(x, maxBytes - this.#headBytes, 0, linesCut);
    const cut = Math.min(linesCut, bytesCut);
    if (cut < x.length) {
      this.#cutBy = linesCut <= bytesCut ? "lines" : "bytes";
    }
    const kept = cut === x.length ? x : x.slice(0, cut);
    if (kept.length > 0) {
      this.#chunks.push(kept);
      this.#headUnits += kept.length;
      this.#headBytes += used;
      this.#headNewlines += countNewlines(kept);
      this.#headEndsWithNewline = kept.charCodeAt(kept.length - 1) === 10;
    }
    return kept;
  }
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}
