/**
 * ripgrep's plain output (`--null --line-number --with-filename`) read back as lines,
 * each bounded: ripgrep itself cuts a long line to a preview (`--max-columns`), and each
 * output record is held to `RIPGREP_RECORD_BYTES` whatever ripgrep prints (decision 244).
 * Plain output, not `--json`: the JSON form ignores `--max-columns`, lists every
 * submatch (a 30 MB line of `a` is a 1.5 GB event) and puts the line number after the text.
 */
import { GREP_MAX_LINE_CHARS } from "./grep-blocks.ts";
import type { SplitRecord } from "./record-splitter.ts";

/**
 * Bytes of a line ripgrep prints before it cuts it to a preview: a preview this long
 * holds more than `GREP_MAX_LINE_CHARS` UTF-16 units whatever the text (at most 3 bytes
 * per unit), so grep still marks the line cut and ripgrep's own note is cut off.
 */
const RIPGREP_MAX_COLUMNS = 4 * GREP_MAX_LINE_CHARS;

/** Longest output record kept: a path (PATH_MAX), a line number and a preview with its note. */
export const RIPGREP_RECORD_BYTES = 8192;

/** The arguments that make ripgrep print what `RipgrepLines` reads. */
export const RIPGREP_LINE_ARGS = [
  "--null",
  "--line-number",
  "--with-filename",
  "--no-heading",
  "--no-context-separator",
  "--color",
  "never",
  "--max-columns",
  String(RIPGREP_MAX_COLUMNS),
  "--max-columns-preview",
];

/** One line ripgrep printed: a match or a context line. */
interface RipgrepLine {
  path: string;
  line: number;
  text: string;
  isMatch: boolean;
}

/** ripgrep's note for a binary file that matched: skipped, as the walker skips binary files. */
const BINARY_NOTE = /: binary file matches \(found .* byte around offset \d+\)$/;

/** What a file name may add before the next record (it held a line break). */
const MAX_PENDING_PATH_BYTES = 4096;

/**
 * Turns `\n`-ended records of ripgrep's output into lines. A file name holding a line
 * break arrives split over records; the piece before the break is kept for the next.
 * @example
 * const lines = new RipgrepLines((l) => blocks.line(l.path, l.line, l.text, l.isMatch));
 * runRipgrep(jail, rg, [...RIPGREP_LINE_ARGS, "-e", "x"], root, { separator: 10, maxBytes: RIPGREP_RECORD_BYTES, onRecord: (r) => lines.record(r) });
 */
export class RipgrepLines {
  readonly #onLine: (line: RipgrepLine) => boolean;
  #pending: Buffer | null = null;

  constructor(onLine: (line: RipgrepLine) => boolean) {
    this.#onLine = onLine;
  }

  /** Reads one record; false once `onLine` asked to stop. */
  record({ head }: SplitRecord): boolean {
    const bytes = this.#pending ? Buffer.concat([this.#pending, Buffer.from("\n"), head]) : head;
    this.#pending = null;
    const nul = bytes.indexOf(0);
    if (nul === -1) {
      const text = bytes.toString("utf8");
      if (!BINARY_NOTE.test(text) && bytes.length <= MAX_PENDING_PATH_BYTES) this.#pending = bytes;
      return true;
    }
    let at = nul + 1;
    let line = 0;
    while (at < bytes.length && bytes[at]! >= 0x30 && bytes[at]! <= 0x39) {
      line = line * 10 + (bytes[at]! - 0x30);
      at++;
    }
    const sep = bytes[at];
    if (at === nul + 1 || (sep !== 0x3a && sep !== 0x2d)) return true;
    return this.#onLine({
      path: bytes.subarray(0, nul).toString("utf8"),
      line,
      text: bytes.subarray(at + 1).toString("utf8"),
      isMatch: sep === 0x3a,
    });
  }
}
