/**
 * `find { pattern, path?, limit? }`: pi's `find` (decision 132) beside `glob`: files
 * matching a glob, hidden ones included, `.gitignore` applied, as paths relative to the
 * searched directory, the first `limit` (default 1000).
 */
import { z } from "zod";
import { formatSize } from "../core/output/index.ts";
import type { FindResult } from "../execenv/index.ts";
import { OUTPUT_BYTES } from "../protocol/index.ts";
import { asked, limitParam, sandboxLookup } from "./sandbox.ts";

const findParams = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(1024)
    .describe("Glob, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'"),
  path: z
    .string()
    .max(4096)
    .optional()
    .describe(
      "Directory to search, relative to the workspace root or under /workspace (default: the root)",
    ),
  limit: limitParam(100_000, "Most paths to return (default 1000)"),
});

/**
 * The text `find` shows.
 * @example formatFind({ paths: ["a.ts"], truncated: false, omitted: { kind: "none" }, engine: "walker" }, 1000) // "a.ts"
 */
function formatFind(r: FindResult, limit: number): string {
  if (r.paths.length === 0) return "No files found matching pattern";
  const body = r.paths.join("\n");
  if (!r.truncated) return body;
  return `${body}\n\n[The first ${limit} results are shown; more match. Use limit=${limit * 2} for more, or refine the pattern.]`;
}

export const findTool = sandboxLookup({
  name: "find",
  description: `Finds files in the sandbox workspace by glob ('*.ts' matches names at any depth, 'src/**/*.ts' paths below the directory), hidden files included, .gitignore respected. Returns paths relative to the searched directory, at most limit (default 1000) and ${formatSize(OUTPUT_BYTES)}.`,
  params: findParams,
  maxItems: 100_000,
  lookup: async (client, params, signal) => {
    const limit = params.limit ?? 1000;
    const result = await asked(() => client.find(params, signal));
    const text = formatFind(result, limit);
    return result.truncated ? { text, details: { resultLimitReached: limit } } : text;
  },
});
