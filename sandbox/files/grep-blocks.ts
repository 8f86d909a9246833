import type { GrepLine, GrepMatch } from "../../src/protocol/index.ts";

/** Longest line grep shows (longer ones are cut and marked with "…"), as pi's grep cuts at 500. */
export const GREP_MAX_LINE_CHARS = 500;

/** A shown line and whether the preview cap cut it. */
interface ShownLine extends GrepLine {
  cut: boolean;
}

/** A match waiting for the lines after it. */
interface OpenBlock {
  path: string;
  match: ShownLine;
  before: ShownLine[];
  after: ShownLine[];
}

/**
 * Turns the lines of each searched file, in order, into grep matches with `context`
 * lines before and after each, the way pi's grep shows them: one block per match, so
 * the blocks of nearby matches overlap and repeat their shared lines (a match inside
 * another's block is a context line there). A file's lines may skip numbers (ripgrep
 * sends only the lines near a match); the walker sends every line.
 *
 * `emit` gets each finished match in order and answers false to stop the search; a
 * match is finished once a line `context` past it (or its file's end) has been seen,
 * so the last kept match is whole even when the next one is the probe.
 * @example
 * const blocks = new GrepBlocks(1, (m) => { out.push(m); return true; });
 * blocks.line("a.ts", 1, "x", false); blocks.line("a.ts", 2, "hit", true); blocks.finish();
 * // out: [{ path: "a.ts", line: 2, text: "hit", before: [{ line: 1, text: "x" }], after: [] }]
 */
export class GrepBlocks {
  readonly #context: number;
  readonly #emit: (match: GrepMatch) => boolean;
  #path: string | null = null;
  /** The last `context` lines of the current file, for the next match's `before`. */
  #recent: ShownLine[] = [];
  #open: OpenBlock[] = [];
  #stopped = false;
  #cutLines = 0;

  constructor(context: number, emit: (match: GrepMatch) => boolean) {
    this.#context = context;
    this.#emit = emit;
  }

  /** Lines cut by the preview cap among the lines of the matches emitted so far. */
  get cutLines(): number {
    return this.#cutLines;
  }

  /** Whether `emit` asked to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Offers line `line` of `path` (its text without the line break); false once the
   * search should stop. With no context only matching lines need to be offered.
   */
  line(path: string, line: number, text: string, isMatch: boolean): boolean {
    if (this.#stopped) return false;
    if (path !== this.#path) {
      if (!this.endFile()) return false;
      this.#path = path;
    }
    const shown = shownLine(line, text);
    const c = this.#context;
    for (const block of this.#open) {
      if (line <= block.match.line + c) block.after.push(shown);
    }
    while (this.#open.length > 0 && line >= (this.#open[0] as OpenBlock).match.line + c) {
      if (!this.#send(this.#open.shift() as OpenBlock)) return false;
    }
    if (isMatch) {
      const before = this.#recent.filter((l) => l.line >= line - c);
      const block = { path, match: shown, before, after: [] };
      if (c === 0) {
        if (!this.#send(block)) return false;
      } else this.#open.push(block);
    }
    if (c > 0) {
      this.#recent.push(shown);
      if (this.#recent.length > c) this.#recent.shift();
    }
    return true;
  }

  /** The current file has ended: its open matches are finished. False once stopped. */
  endFile(): boolean {
    while (this.#open.length > 0) {
      if (!this.#send(this.#open.shift() as OpenBlock)) return false;
    }
    this.#recent = [];
    this.#path = null;
    return !this.#stopped;
  }

  /** The search has ended: emits what is still open. */
  finish(): void {
    if (!this.#stopped) this.endFile();
  }

  #send(block: OpenBlock): boolean {
    if (this.#stopped) return false;
    const plain = (l: ShownLine): GrepLine => ({ line: l.line, text: l.text });
    const match: GrepMatch = { path: block.path, line: block.match.line, text: block.match.text };
    if (this.#context > 0) {
      match.before = block.before.map(plain);
      match.after = block.after.map(plain);
    }
    if (!this.#emit(match)) {
      this.#stopped = true;
      return false;
    }
    for (const l of [...block.before, block.match, ...block.after]) if (l.cut) this.#cutLines++;
    return true;
  }
}

/** A line as grep shows it: without a CR before its line break, cut to the preview cap. */
function shownLine(line: number, raw: string): ShownLine {
  const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  return text.length > GREP_MAX_LINE_CHARS
    ? { line, text: `${text.slice(0, GREP_MAX_LINE_CHARS)}…`, cut: true }
    : { line, text, cut: false };
}
