/**
 * `edit { path, edits: [{ oldText, newText }, …] }`: exact-text replacements with pi's
 * rules (sandbox/files/edit-text.ts): each oldText matched against the original file,
 * unique and not overlapping another. The result is the numbered line diff with the
 * first changed line, in the text and in `details` (pi's `{ diff, firstChangedLine }`).
 */
import { z } from "zod";
import type { JsonObject } from "../core/chord/types.ts";
import { defineTool } from "./registry.ts";
import { asked, sandboxClientFor } from "./sandbox.ts";

const editParams = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(4096)
    .describe("File path, relative to the workspace root or absolute under /workspace"),
  edits: z
    .array(
      z.strictObject({
        oldText: z
          .string()
          .describe("Text to replace: found once in the original file, overlapping no other edit"),
        newText: z.string().describe("What replaces it"),
      }),
    )
    .min(1)
    .max(1000)
    .describe("Replacements, each matched against the original file (not after earlier edits)"),
});

export const editTool = defineTool({
  name: "edit",
  description:
    "Edits a file in the sandbox workspace by exact text replacement. Every edits[].oldText must match one region of the original file exactly (whitespace and newlines included), once, and not overlap another edit; merge nearby changes into one edit. Line endings and a BOM are kept. The file is replaced atomically; the result is a numbered line diff with the first changed line.",
  params: editParams,
  output: { retain: "head" },
  replaySafe: false,
  sandbox: true,
  async execute({ params, out, signal, context }) {
    const client = sandboxClientFor(context);
    const result = await asked(() => client.edit(params, signal));
    out.replace(
      `Successfully replaced ${result.replaced} block(s) in ${result.path}.\n\n${result.diff}`,
    );
    const details: JsonObject = { diff: result.diff };
    if (result.firstChangedLine !== undefined) details.firstChangedLine = result.firstChangedLine;
    Object.assign(out.details as JsonObject, details);
  },
});
