/**
 * `ls { path?, limit? }`: a workspace directory's entries, sorted case-insensitively,
 * `/` after directories, dotfiles included, the first `limit` (default 500).
 */
import { z } from "zod";
import { formatCount, formatSize } from "../core/output/index.ts";
import type { LsResult } from "../execenv/index.ts";
import { OUTPUT_BYTES } from "../protocol/index.ts";
import { asked, limitParam, sandboxLookup } from "./sandbox.ts";

const lsParams = z.strictObject({
  path: z
    .string()
    .max(4096)
    .optional()
    .describe(
      "Directory to list, relative to the workspace root or under /workspace (default: the root)",
    ),
  limit: limitParam(100_000, "Most entries to return (default 500)"),
});

/**
 * The text `ls` shows.
 * @example formatLs({ path: ".", entries: ["a.ts", "src/"], total: 2 }, 500) // "a.ts\nsrc/"
 */
function formatLs(r: LsResult, limit: number): string {
  if (r.total === 0) return "(empty directory)";
  const body = r.entries.join("\n");
  if (r.entries.length === r.total) return body;
  return `${body}\n\n[Showing ${formatCount(r.entries.length)} of ${formatCount(r.total)} entries. Use limit=${limit * 2} for more.]`;
}

export const lsTool = sandboxLookup({
  name: "ls",
  description: `Lists a directory in the sandbox workspace: entries sorted alphabetically (case-insensitive), '/' after directories, dotfiles included, at most limit (default 500) and ${formatSize(OUTPUT_BYTES)}.`,
  params: lsParams,
  maxItems: 100_000,
  lookup: async (client, params, signal) => {
    const limit = params.limit ?? 500;
    const result = await asked(() => client.ls(params, signal));
    const text = formatLs(result, limit);
    return result.entries.length < result.total
      ? { text, details: { entryLimitReached: limit } }
      : text;
  },
});
