/**
 * `grep { pattern, path?, glob?, ignoreCase?, literal?, context?, limit? }`: matching
 * lines as `path:line: text`, with `context` lines around each as `path-line- text`
 * (pi's grep format); the first `limit` matches (default 100). The search stops at the
 * first match past the limit, so the notice says more exist without claiming how many.
 */
import { z } from "zod";
import { formatRetentionNotice } from "../core/retention/index.ts";
import type { GrepLine, GrepMatch, GrepResult } from "../execenv/index.ts";
import { GREP_MAX_CONTEXT, GREP_MAX_LINES } from "../protocol/index.ts";
import { type LookupAnswer, limitParam, sandboxLookup } from "./sandbox.ts";

const grepParams = z.strictObject({
  pattern: z.string().min(1).max(4096).describe("Regular expression (or text with literal: true)"),
  path: z
    .string()
    .max(4096)
    .optional()
    .describe("File or directory to search (default: the workspace root)"),
  glob: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe("Only files matching this glob, e.g. '*.ts'"),
  ignoreCase: z.boolean().optional().describe("Case-insensitive match"),
  literal: z.boolean().optional().describe("Treat pattern as plain text"),
  context: z
    .number()
    .int()
    .min(0)
    .max(GREP_MAX_CONTEXT)
    .optional()
    .describe(`Lines to show before and after each match (default 0, at most ${GREP_MAX_CONTEXT})`),
  limit: limitParam(10_000, "Most matches to return (default 100)"),
});

/** Default of `limit`, as the host applies it. */
const DEFAULT_LIMIT = 100;

/**
 * The text `grep` shows: each match's block (context lines, then the match, then
 * context lines), one after the other, and the notice when the search stopped early.
 * @example formatGrep({ matches: [{ path: "a.ts", line: 3, text: "x", before: [{ line: 2, text: "w" }], after: [] }], truncated: false, omitted: { kind: "none" }, engine: "walker", stoppedBy: null, cutLines: 0 })
 * // "a.ts-2- w\na.ts:3: x"
 */
export function formatGrep(r: GrepResult): string {
  if (r.matches.length === 0) return "No matches found.";
  const body = r.matches.flatMap(blockLines).join("\n");
  const notice = formatRetentionNotice(
    {
      omitted: r.omitted,
      unit: { one: "match", other: "matches" },
      shown: { count: r.matches.length, from: "head" },
    },
    r.stoppedBy === "lines"
      ? `The answer reached ${GREP_MAX_LINES} lines with context; lower context, or narrow the pattern, path or glob.`
      : "Narrow the pattern, path or glob, or raise limit (at most 10000).",
  );
  return notice === "" ? body : `${body}\n\n[${notice}]`;
}

/**
 * What `grep` answers: the text, and pi's grep details: `matchLimitReached` (the limit)
 * when the limit stopped the search, `linesTruncated` when a line was cut to 500 chars.
 */
export function grepAnswer(r: GrepResult, limit = DEFAULT_LIMIT): LookupAnswer {
  const text = formatGrep(r);
  const details: { matchLimitReached?: number; linesTruncated?: boolean } = {};
  if (r.stoppedBy === "limit") details.matchLimitReached = limit;
  if (r.cutLines > 0) details.linesTruncated = true;
  return Object.keys(details).length > 0 ? { text, details } : text;
}

function blockLines(m: GrepMatch): string[] {
  const around = (l: GrepLine) => `${m.path}-${l.line}- ${l.text}`;
  return [
    ...(m.before ?? []).map(around),
    `${m.path}:${m.line}: ${m.text}`,
    ...(m.after ?? []).map(around),
  ];
}

export const grepTool = sandboxLookup({
  name: "grep",
  description:
    "Searches file contents in the sandbox workspace (ripgrep when installed, otherwise a built-in walker; hidden files are skipped). Returns path:line: text for the first limit matches (default 100), with context lines before and after each as path-line- text, long lines cut to 500 characters.",
  params: grepParams,
  maxItems: GREP_MAX_LINES,
  lookup: async (client, params, signal) =>
    grepAnswer(await client.grep(params, signal), params.limit),
});
