/**
 * `read { path, offset?, limit? }`: a window of a workspace file's lines, numbered,
 * each cut to 2000 characters, at most 2000 lines / 50 KB, with the total line count
 * and how to continue.
 */
import { z } from "zod";
import { formatCount, formatSize } from "../core/output/index.ts";
import type { ReadResult } from "../execenv/index.ts";
import { OUTPUT_BYTES, OUTPUT_LINES, READ_LINE_CHARS } from "../protocol/index.ts";
import { limitParam, sandboxLookup } from "./sandbox.ts";

/** Room the output policy leaves above the sandbox's window for the notice lines. */
const NOTICE_ROOM_BYTES = 1024;

const readParams = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(4096)
    .describe("File path, relative to the workspace root or absolute under /workspace"),
  offset: z.number().int().min(1).optional().describe("First line to read, 1-based (default 1)"),
  limit: limitParam(100_000, `Most lines to read (default ${OUTPUT_LINES})`),
});

/**
 * The text `read` shows: `<n>\t<line>` per line, then a notice when the window ended
 * before the file did or lines were cut.
 * @example formatRead({ path: "a", startLine: 1, lines: ["x"], totalLines: 1, cutLines: 0, truncatedBy: null })
 * // "1\tx"
 */
function formatRead(r: ReadResult): string {
  const body = r.lines.map((line, i) => `${r.startLine + i}\t${line}`).join("\n");
  const notices: string[] = [];
  if (r.nextOffset !== undefined) {
    const last = r.startLine + r.lines.length - 1;
    const why = r.truncatedBy === "bytes" ? ` (${formatSize(OUTPUT_BYTES)} limit)` : "";
    notices.push(
      `[Showing lines ${formatCount(r.startLine)}–${formatCount(last)} of ${formatCount(r.totalLines)}${why}. Use offset=${r.nextOffset} to continue.]`,
    );
  }
  if (r.cutLines > 0) {
    notices.push(
      `[${formatCount(r.cutLines)} ${r.cutLines === 1 ? "line was" : "lines were"} cut to ${READ_LINE_CHARS} characters; use bash (e.g. cut -c, fold) to see ${r.cutLines === 1 ? "it" : "them"} whole.]`,
    );
  }
  if (r.totalLines === 0) return "(empty file)";
  return notices.length === 0 ? body : `${body}\n\n${notices.join("\n")}`;
}

export const readTool = sandboxLookup({
  name: "read",
  description: `Reads a text file from the sandbox workspace: numbered lines from offset (1-based), at most limit lines (default ${OUTPUT_LINES}) and ${formatSize(OUTPUT_BYTES)}, long lines cut to ${READ_LINE_CHARS} characters. Reports the total line count and the offset to continue from.`,
  params: readParams,
  maxItems: OUTPUT_LINES,
  maxBytes: OUTPUT_BYTES + NOTICE_ROOM_BYTES,
  lookup: async (client, params, signal) => formatRead(await client.read(params, signal)),
});
