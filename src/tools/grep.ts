/**
 * `grep { pattern, path?, glob?, ignoreCase?, literal?, limit? }`: matching lines as
 * `path:line: text`, the first `limit` (default 100); the search stops at the first
 * match past the limit, so the notice says more exist without claiming how many.
 */
import { z } from "zod";
import { formatRetentionNotice } from "../core/retention/index.ts";
import type { GrepResult } from "../execenv/index.ts";
import { limitParam, sandboxLookup } from "./sandbox.ts";

export const grepParams = z.strictObject({
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
  limit: limitParam(10_000, "Most matches to return (default 100)"),
});

/**
 * The text `grep` shows.
 * @example formatGrep({ matches: [{ path: "a.ts", line: 3, text: "x" }], truncated: false, omitted: { kind: "none" }, engine: "walker" })
 * // "a.ts:3: x"
 */
export function formatGrep(r: GrepResult): string {
  if (r.matches.length === 0) return "No matches found.";
  const body = r.matches.map((m) => `${m.path}:${m.line}: ${m.text}`).join("\n");
  const notice = formatRetentionNotice(
    {
      omitted: r.omitted,
      unit: { one: "match", other: "matches" },
      shown: { count: r.matches.length, from: "head" },
    },
    "Narrow the pattern, path or glob, or raise limit (at most 10000).",
  );
  return notice === "" ? body : `${body}\n\n[${notice}]`;
}

export const grepTool = sandboxLookup({
  name: "grep",
  description:
    "Searches file contents in the sandbox workspace (ripgrep when installed, otherwise a built-in walker; hidden files are skipped). Returns path:line: text for the first limit matches (default 100), long lines cut to 500 characters.",
  params: grepParams,
  maxItems: 10_000,
  lookup: async (client, params, signal) => formatGrep(await client.grep(params, signal)),
});
