import type { FileHandle } from "node:fs/promises";
import { utf8ByteLength, utf8HeadIndex } from "../../src/core/retention/utf8.ts";
import type { ReadResult } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";

interface ReadWindow {
  /** 1-based first line. */
  offset: number;
  /** Most lines returned. */
  limit: number;
  /** Byte cap of the returned lines as the tool prints them (`<n>\t<line>\n`). */
  maxBytes: number;
  /** Longer lines are cut to this many UTF-16 units. */
  maxLineChars: number;
}

/**
 * Reads a window of lines from a text file in one streaming pass: memory stays near
 * the window whatever the file's size, and the total line count is exact. The file was
 * opened and checked through its descriptor (`openInside`, or the spill folder's
 * `openRead`); it is read from that descriptor and closed.
 * @example await readLines(await openInside(ws, abs, "src/a.ts", "file"), "src/a.ts", { offset: 1, limit: 2000, maxBytes: 51200, maxLineChars: 2000 })
 */
export async function readLines(
  handle: FileHandle,
  rel: string,
  win: ReadWindow,
): Promise<ReadResult> {
  const collector = new LineCollector(win);
  const decoder = new TextDecoder("utf-8");
  let first = true;
  for await (const chunk of handle.createReadStream() as AsyncIterable<Buffer>) {
    if (first && chunk.subarray(0, 8192).includes(0)) {
      throw new SandboxError(
        "bad_request",
        `'${rel}' looks like a binary file (it contains NUL bytes); inspect it with bash (e.g. xxd, file)`,
      );
    }
    first = false;
    if (collector.collecting) collector.feed(decoder.decode(chunk, { stream: true }));
    else collector.count(chunk);
  }
  if (collector.collecting) collector.feed(decoder.decode());
  collector.end();
  const { totalLines } = collector;
  if (win.offset > Math.max(totalLines, 1)) {
    throw new SandboxError(
      "bad_request",
      `offset ${win.offset} is past the end of '${rel}' (${totalLines} lines); use an offset from 1 to ${Math.max(totalLines, 1)}`,
    );
  }
  const result: ReadResult = {
    path: rel,
    startLine: win.offset,
    lines: collector.lines,
    totalLines,
    cutLines: collector.cutLines,
    truncatedBy: collector.truncatedBy,
  };
  const next = win.offset + collector.lines.length;
  if (next <= totalLines) result.nextOffset = next;
  return result;
}

/** Splits decoded text into lines, keeps the requested window, counts the rest. */
class LineCollector {
  readonly lines: string[] = [];
  cutLines = 0;
  truncatedBy: "lines" | "bytes" | null = null;
  totalLines = 0;
  collecting = true;
  readonly #win: ReadWindow;
  #current = "";
  #currentCut = false;
  #currentOpen = false;
  #bytes = 0;

  constructor(win: ReadWindow) {
    this.#win = win;
  }

  feed(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      const piece = text.slice(start, nl === -1 ? text.length : nl);
      this.#grow(piece);
      if (nl === -1) return;
      this.#closeLine();
      start = nl + 1;
    }
  }

  /** Counting only: the window is complete, newlines are all that matter now. */
  count(chunk: Buffer): void {
    let i = chunk.indexOf(10);
    let last = -1;
    while (i !== -1) {
      this.totalLines++;
      this.#currentOpen = false;
      last = i;
      i = chunk.indexOf(10, i + 1);
    }
    if (last < chunk.length - 1) this.#currentOpen = true;
  }

  end(): void {
    if (this.#currentOpen) this.#closeLine();
  }

  #grow(piece: string): void {
    if (piece.length > 0) this.#currentOpen = true;
    if (this.#current.length >= this.#win.maxLineChars) {
      if (piece.length > 0) this.#currentCut = true;
      return;
    }
    this.#current += piece;
    if (this.#current.length > this.#win.maxLineChars) {
      this.#current = this.#current.slice(0, this.#win.maxLineChars);
      this.#currentCut = true;
    }
  }

  #closeLine(): void {
    this.totalLines++;
    const n = this.totalLines;
    if (this.collecting && n >= this.#win.offset) this.#keep(n, this.#current, this.#currentCut);
    this.#current = "";
    this.#currentCut = false;
    this.#currentOpen = false;
  }

  #keep(n: number, text: string, cut: boolean): void {
    if (this.lines.length >= this.#win.limit) {
      this.#stop("lines");
      return;
    }
    const prefix = String(n).length + 2;
    const size = prefix + utf8ByteLength(text);
    if (this.#bytes + size > this.#win.maxBytes) {
      if (this.lines.length > 0) {
        this.#stop("bytes");
        return;
      }
      // A first line that alone exceeds the cap is shown cut rather than not at all.
      text = text.slice(0, utf8HeadIndex(text, Math.max(0, this.#win.maxBytes - prefix)));
      cut = true;
      this.truncatedBy = "bytes";
    }
    this.#bytes += prefix + utf8ByteLength(text);
    this.lines.push(text);
    if (cut) this.cutLines++;
  }

  #stop(by: "lines" | "bytes"): void {
    this.truncatedBy = by;
    this.collecting = false;
  }
}
