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
 * text is kept as a queue of chunks and a queue of line starts, never re-scanned.
 */
import { utf8ByteLength } from "../retention/utf8.ts";
import type { OutputPolicy, Truncation } from "./types.ts";

/** What changed in the retained text: `next = prev.slice(drop) + append`. */
export interface WindowChange {
  /** UTF-16 code units removed from the start of the retained text (always 0 in head mode). */
  drop: number;
  /** Text added at the end of the retained text. */
  append: string;
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Bytes and length of the character at `i` (a surrogate pair is one character). */
function charAt(s: string, i: number): { units: number; bytes: number } {
  const c = s.charCodeAt(i);
  if (c < 0x80) return { units: 1, bytes: 1 };
  if (c < 0x800) return { units: 1, bytes: 2 };
  if (isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1))) return { units: 2, bytes: 4 };
  return { units: 1, bytes: 3 };
}

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
export function assertOutputPolicy(policy: OutputPolicy): void {
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

/** Dropped units of one chunk after which its kept part is copied out (see `compact`). */
const RELEASE_AFTER = 65_536;

/** Strings with the front cut lazily: `drop` is proportional to what it removes. */
class ChunkQueue {
  private chunks: string[] = [];
  private first = 0;
  /** Units already removed from `chunks[first]`. */
  private offset = 0;
  private joined: string | null = "";

  push(s: string): void {
    if (s.length === 0) return;
    this.chunks.push(s);
    this.joined = null;
  }

  /** Removes `n` units from the front; returns their UTF-8 bytes and "\n" count. */
  drop(n: number): { bytes: number; newlines: number } {
    let bytes = 0;
    let newlines = 0;
    while (n > 0) {
      const c = this.chunks[this.first]!;
      const take = Math.min(n, c.length - this.offset);
      bytes += utf8ByteLength(c, this.offset, this.offset + take);
      for (let i = this.offset; i < this.offset + take; i++) if (c.charCodeAt(i) === 10) newlines++;
      n -= take;
      this.offset += take;
      if (this.offset === c.length) {
        this.first++;
        this.offset = 0;
      }
    }
    this.compact();
    this.joined = null;
    return { bytes, newlines };
  }

  /**
   * Removes the fewest whole characters from the front so that at least `bytes` bytes go;
   * returns the units and bytes removed. Pairs never straddle chunks (see `TextWindow`).
   */
  dropBytes(bytes: number): { units: number; bytes: number } {
    let units = 0;
    let removed = 0;
    while (removed < bytes && this.first < this.chunks.length) {
      const c = this.chunks[this.first]!;
      while (removed < bytes && this.offset < c.length) {
        const ch = charAt(c, this.offset);
        this.offset += ch.units;
        units += ch.units;
        removed += ch.bytes;
      }
      if (this.offset === c.length) {
        this.first++;
        this.offset = 0;
      }
    }
    this.compact();
    this.joined = null;
    return { units, bytes: removed };
  }

  /** True if the unit at `i` (counted from the front) is the low half of a pair. */
  splitsPair(i: number): boolean {
    if (i <= 0) return false;
    let k = this.first;
    let at = this.offset + i;
    while (k < this.chunks.length && at >= this.chunks[k]!.length) {
      at -= this.chunks[k]!.length;
      k++;
    }
    if (k >= this.chunks.length || at === 0) return false;
    const c = this.chunks[k]!;
    return isLow(c.charCodeAt(at)) && isHigh(c.charCodeAt(at - 1));
  }

  text(): string {
    if (this.joined === null) {
      const live = this.chunks.slice(this.first);
      if (live.length > 0) live[0] = live[0]!.slice(this.offset);
      this.joined = live.join("");
      this.chunks = this.joined.length > 0 ? [this.joined] : [];
      this.first = 0;
      this.offset = 0;
    }
    return this.joined;
  }

  clear(): void {
    this.chunks = [];
    this.first = 0;
    this.offset = 0;
    this.joined = "";
  }

  private compact(): void {
    // A huge write mostly dropped would otherwise stay alive through the slice that keeps
    // its tail: copy the kept part once the dropped part is large (cost ∝ what was dropped).
    const head = this.chunks[this.first];
    if (head !== undefined && this.offset >= RELEASE_AFTER && this.offset * 2 > head.length) {
      this.chunks[this.first] = JSON.parse(JSON.stringify(head.slice(this.offset))) as string;
      this.offset = 0;
    }
    if (this.first > 64 && this.first * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
  }
}

/** Line starts (absolute unit and byte positions) as a queue. */
class LineStarts {
  private units: number[] = [];
  private bytes: number[] = [];
  private first = 0;

  get size(): number {
    return this.units.length - this.first;
  }
  push(unit: number, byte: number): void {
    this.units.push(unit);
    this.bytes.push(byte);
  }
  peekUnit(): number | undefined {
    return this.first < this.units.length ? this.units[this.first]! : undefined;
  }
  peekByte(): number {
    return this.bytes[this.first]!;
  }
  shift(): void {
    this.first++;
    if (this.first > 64 && this.first * 2 > this.units.length) {
      this.units = this.units.slice(this.first);
      this.bytes = this.bytes.slice(this.first);
      this.first = 0;
    }
  }
  clear(): void {
    this.units = [];
    this.bytes = [];
    this.first = 0;
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
  private readonly chunks = new ChunkQueue();
  /** A lone high surrogate held back from the end of the text. */
  private pending = "";

  // Totals of everything appended (absolute positions count from the last `replace`).
  private end = 0;
  private endByte = 0;
  private newlines = 0;
  /** The line start after the last "\n", and the one before it. */
  private lastBreak = 0;
  private prevBreak = 0;

  // Tail: the retained text is [start, end); `starts` holds the line starts in (start, end].
  private readonly starts = new LineStarts();
  private start = 0;
  private startByte = 0;
  /** The retained text starts inside the last line (its head was cut by bytes). */
  private midLine = false;

  // Head: measures of the retained text, and the cut once one happened.
  private headUnits = 0;
  private headBytes = 0;
  private headNewlines = 0;
  private headEndsWithNewline = false;
  private cutBy: "lines" | "bytes" | null = null;

  // After `resume`: what was appended before the resumed text, and whether it was cut.
  private priorLines = 0;
  private priorBytes = 0;
  private priorCut = false;

  constructor(policy: OutputPolicy) {
    assertOutputPolicy(policy);
    this.policy = { retain: policy.retain, maxBytes: policy.maxBytes, maxLines: policy.maxLines };
  }

  /** The retained text. */
  get text(): string {
    return this.chunks.text();
  }

  /** Length of the retained text in UTF-16 units. */
  get length(): number {
    return this.policy.retain === "head" ? this.headUnits : this.end - this.start;
  }

  /**
   * Appends `text`; returns how the retained text changed.
   * @example new TextWindow({ retain: "head", maxBytes: 3, maxLines: 9 }).append("abcd") // { drop: 0, append: "abc" }
   */
  append(text: string): WindowChange {
    const x = this.admit(text);
    if (this.policy.retain === "head") return { drop: 0, append: this.appendHead(x) };
    return this.appendTail(x);
  }

  /**
   * Starts over with `text` as everything appended so far (totals restart too).
   * @example w.replace("fresh") // { drop: <old length>, append: "fresh" } when it fits
   */
  replace(text: string): WindowChange {
    const drop = this.length;
    this.chunks.clear();
    this.starts.clear();
    this.pending = "";
    this.end = this.endByte = this.newlines = this.lastBreak = this.prevBreak = 0;
    this.start = this.startByte = 0;
    this.midLine = false;
    this.headUnits = this.headBytes = this.headNewlines = 0;
    this.headEndsWithNewline = false;
    this.cutBy = null;
    this.priorLines = this.priorBytes = 0;
    this.priorCut = false;
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
    this.priorLines = Math.max(0, truncation.totalLines - own.totalLines);
    this.priorBytes = Math.max(0, truncation.totalBytes - own.totalBytes);
    if (!truncation.truncated || own.truncated) return;
    if (this.policy.retain === "head") this.cutBy = truncation.truncatedBy ?? "bytes";
    else {
      this.priorCut = true;
      this.midLine = truncation.lastLinePartial;
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
    if (this.chunks.splitsPair(drop)) {
      throw new RangeError(`slide drop ${drop} would split a surrogate pair.`);
    }
    if (drop > 0) {
      const gone = this.chunks.drop(drop);
      if (this.policy.retain === "head") {
        this.headUnits -= drop;
        this.headBytes -= gone.bytes;
        this.headNewlines -= gone.newlines;
        if (this.headUnits === 0) this.headEndsWithNewline = false;
      } else {
        this.start += drop;
        this.startByte += gone.bytes;
        this.shiftStartsUpTo(this.start);
        this.midLine = false;
      }
    }
    const change = this.append(text);
    return { drop: drop + change.drop, append: change.append };
  }

  /** Totals of everything appended and measures of the retained text. */
  truncation(): Truncation {
    const { maxBytes, maxLines } = this.policy;
    const endsWithNewline = this.end > 0 && this.lastBreak === this.end;
    const totalLines =
      this.priorLines +
      this.newlines +
      (this.pending !== "" || (this.end > 0 && !endsWithNewline) ? 1 : 0);
    const totalBytes = this.priorBytes + this.endByte + (this.pending !== "" ? 3 : 0);
    if (this.policy.retain === "head") {
      const truncated = this.cutBy !== null;
      const partial = this.headUnits > 0 && !this.headEndsWithNewline;
      return {
        truncated,
        truncatedBy: this.cutBy,
        totalLines,
        totalBytes,
        outputLines: this.headNewlines + (partial ? 1 : 0),
        outputBytes: this.headBytes,
        maxLines,
        maxBytes,
        lastLinePartial: truncated && partial,
        firstLineExceedsLimit: this.cutBy === "bytes" && this.headNewlines === 0,
      };
    }
    const outputLines = this.starts.size + (this.start < this.end && !endsWithNewline ? 1 : 0);
    const truncated = this.start > 0 || this.priorCut;
    let truncatedBy: Truncation["truncatedBy"] = null;
    if (truncated) truncatedBy = !this.midLine && outputLines >= maxLines ? "lines" : "bytes";
    return {
      truncated,
      truncatedBy,
      totalLines,
      totalBytes,
      outputLines,
      outputBytes: this.endByte - this.startByte,
      maxLines,
      maxBytes,
      lastLinePartial: truncated && this.midLine,
      firstLineExceedsLimit: false,
    };
  }

  /** Holds back a trailing lone high surrogate so no stored chunk ends inside a pair. */
  private admit(text: string): string {
    let x = this.pending + text;
    this.pending = "";
    if (x.length > 0 && isHigh(x.charCodeAt(x.length - 1))) {
      this.pending = x.slice(-1);
      x = x.slice(0, -1);
    }
    return x;
  }

  /** Adds `x` to the totals; in tail mode also records its line starts. */
  private measure(x: string): void {
    const tail = this.policy.retain === "tail";
    let from = 0;
    let byte = this.endByte;
    for (let nl = x.indexOf("\n"); nl !== -1; nl = x.indexOf("\n", nl + 1)) {
      byte += utf8ByteLength(x, from, nl + 1);
      from = nl + 1;
      this.newlines++;
      this.prevBreak = this.lastBreak;
      this.lastBreak = this.end + from;
      if (tail) this.starts.push(this.end + from, byte);
    }
    this.endByte = byte + utf8ByteLength(x, from, x.length);
    this.end += x.length;
  }

  private appendTail(x: string): WindowChange {
    const oldStart = this.start;
    const oldEnd = this.end;
    this.measure(x);
    this.chunks.push(x);
    this.settleTail();
    if (this.start <= oldEnd) return { drop: this.start - oldStart, append: x };
    return { drop: oldEnd - oldStart, append: x.slice(this.start - oldEnd) };
  }

  /** Moves the start forward to the earliest position the tail rules allow. */
  private settleTail(): void {
    const { maxBytes, maxLines } = this.policy;
    if (maxLines === 0) {
      const gone = this.chunks.drop(this.end - this.start);
      this.start = this.end;
      this.startByte += gone.bytes;
      this.shiftStartsUpTo(this.start);
      return;
    }
    const endsWithNewline = this.end > 0 && this.lastBreak === this.end;
    const lastLineStart = endsWithNewline ? this.prevBreak : this.lastBreak;
    for (;;) {
      const lines = this.starts.size + (this.start < this.end && !endsWithNewline ? 1 : 0);
      const bytes = this.endByte - this.startByte;
      // A start left inside a line that is no longer the last one must move to a line start.
      const stranded = this.midLine && this.start < lastLineStart;
      if (lines <= maxLines && bytes <= maxBytes && !stranded) return;
      const next = this.starts.peekUnit();
      if (next !== undefined && next <= lastLineStart) {
        this.chunks.drop(next - this.start);
        this.start = next;
        this.startByte = this.starts.peekByte();
        this.starts.shift();
        this.midLine = false;
        continue;
      }
      // The start is in the last line, which alone is over maxBytes: keep its last bytes.
      const gone = this.chunks.dropBytes(bytes - maxBytes);
      this.start += gone.units;
      this.startByte += gone.bytes;
      this.shiftStartsUpTo(this.start);
      this.midLine = true;
      return;
    }
  }

  private shiftStartsUpTo(unit: number): void {
    for (let s = this.starts.peekUnit(); s !== undefined && s <= unit; s = this.starts.peekUnit()) {
      this.starts.shift();
    }
  }

  /** Head: keeps what fits of `x` and returns it; once something was cut, only counts. */
  private appendHead(x: string): string {
    this.measure(x);
    if (this.cutBy !== null || x.length === 0) return "";
    const { maxBytes, maxLines } = this.policy;
    const room = maxLines - this.headNewlines;
    let linesCut = room <= 0 ? 0 : x.length;
    let seen = 0;
    for (let nl = x.indexOf("\n"); room > 0 && nl !== -1; nl = x.indexOf("\n", nl + 1)) {
      if (++seen === room) {
        linesCut = nl + 1;
        break;
      }
    }
    const budget = maxBytes - this.headBytes;
    let bytesCut = 0;
    let used = 0;
    while (bytesCut < linesCut) {
      const ch = charAt(x, bytesCut);
      if (used + ch.bytes > budget) break;
      used += ch.bytes;
      bytesCut += ch.units;
    }
    const cut = Math.min(linesCut, bytesCut);
    if (cut < x.length) {
      this.cutBy = linesCut <= bytesCut ? "lines" : "bytes";
    }
    const kept = cut === x.length ? x : x.slice(0, cut);
    if (kept.length > 0) {
      this.chunks.push(kept);
      this.headUnits += kept.length;
      this.headBytes += used;
      this.headNewlines += countNewlines(kept);
      this.headEndsWithNewline = kept.charCodeAt(kept.length - 1) === 10;
    }
    return kept;
  }
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}
