/**
 * `glob { pattern, path?, limit? }`: workspace-relative paths of files matching a glob,
 * the first `limit` (default 1000) in path order; the listing stops at the probe.
 */
import { z } from "zod";
import { formatRetentionNotice } from "../core/retention/index.ts";
import type { GlobResult } from "../execenv/index.ts";
import { limitParam, sandboxLookup } from "./sandbox.ts";

const globParams = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(1024)
    .describe("Glob, e.g. '**/*.ts'; without '/' it matches file names at any depth"),
  path: z.string().max(4096).optional().describe("Directory to list (default: the workspace root)"),
  limit: limitParam(100_000, "Most paths to return (default 1000)"),
});

/**
 * The text `glob` shows.
 * @example formatGlob({ paths: ["a.ts"], truncated: false, omitted: { kind: "none" }, engine: "ripgrep" }) // "a.ts"
 */
function formatGlob(r: GlobResult): string {
  if (r.paths.length === 0) return "No files found.";
  const notice = formatRetentionNotice(
    { omitted: r.omitted, unit: "path", shown: { count: r.paths.length, from: "head" } },
    "Use a narrower pattern or path, or raise limit.",
  );
  const body = r.paths.join("\n");
  return notice === "" ? body : `${body}\n\n[${notice}]`;
}

export const globTool = sandboxLookup({
  name: "glob",
  description:
    "Lists files in the sandbox workspace whose path matches a glob ('*.ts' matches names at any depth, 'src/**/*.ts' whole paths), in path order, at most limit (default 1000). Hidden files are skipped.",
  params: globParams,
  maxItems: 100_000,
  lookup: async (client, params, signal) => formatGlob(await client.glob(params, signal)),
});
