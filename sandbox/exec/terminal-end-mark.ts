/**
 * The mark a terminal's shell prints once the jail has exited (terminal.ts), and the scan
 * that finds it in what the terminal prints. Everything the command printed is before the
 * mark (a terminal's output is in order), so the host has read all of it when it reads
 * the mark, and only then lets the shell exit and the terminal close.
 *
 * The mark is an OSC sequence no terminal acts on, with a number drawn for each terminal.
 * It is ESC, BEL, digits and `]`/`;` only: no output setting of a terminal (`stty olcuc`,
 * `onlcr`, `-opost`) changes those bytes. The command cannot print it: it runs in the jail,
 * which cannot see the number in the shell's arguments.
 */
import { randomInt } from "node:crypto";

/** A new mark: `ESC ] 7770 ; <24 digits> BEL`. */
export function newEndMark(): Buffer {
  let digits = "";
  for (let i = 0; i < 4; i++) digits += randomInt(0, 1_000_000).toString().padStart(6, "0");
  return Buffer.from(`\x1b]7770;${digits}\x07`, "latin1");
}

const NOTHING = Buffer.alloc(0);

/** What one chunk of terminal output gives: the bytes that are the command's, and whether the mark came. */
export interface ScannedOutput {
  output: Buffer;
  ended: boolean;
}

/**
 * Takes the terminal's output chunk by chunk and hands on the command's bytes, without
 * the mark. A chunk that ends in the start of the mark keeps those bytes back until the
 * next chunk says whether the mark goes on (reads split the mark at any byte). After the
 * mark, nothing more is the command's (what the terminal echoes while the shell exits).
 * @example const scan = new EndMarkScanner(mark); const { output, ended } = scan.push(chunk);
 */
export class EndMarkScanner {
  readonly #mark: Buffer;
  /** Bytes held back: the start of the mark, or what may be. */
  #held: Buffer = NOTHING;
  #ended = false;

  constructor(mark: Buffer) {
    this.#mark = mark;
  }

  push(chunk: Buffer): ScannedOutput {
    if (this.#ended) return { output: NOTHING, ended: true };
    const data = this.#held.length > 0 ? Buffer.concat([this.#held, chunk]) : chunk;
    const at = data.indexOf(this.#mark);
    if (at >= 0) {
      this.#ended = true;
      this.#held = NOTHING;
      return { output: data.subarray(0, at), ended: true };
    }
    const keep = this.#markStartAtEnd(data);
    // A copy, so the few bytes kept do not hold the whole read in memory.
    this.#held = keep > 0 ? Buffer.from(data.subarray(data.length - keep)) : NOTHING;
    return { output: data.subarray(0, data.length - keep), ended: false };
  }

  /** The length of the longest end of `data` that the mark starts with (0 if none). */
  #markStartAtEnd(data: Buffer): number {
    const first = this.#mark[0]!;
    let at = data.indexOf(first, Math.max(0, data.length - (this.#mark.length - 1)));
    while (at >= 0) {
      const end = data.subarray(at);
      if (end.equals(this.#mark.subarray(0, end.length))) return end.length;
      at = data.indexOf(first, at + 1);
    }
    return 0;
  }
}
