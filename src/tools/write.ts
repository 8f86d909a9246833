/**
 * `write { path, content }`: replaces a workspace file's whole content atomically,
 * creating parent folders; the result gives the bytes and lines written. Not replay-safe:
 * the invocation's toolCallId makes a retried call answer its stored result instead.
 */
import { z } from "zod";
import type { JsonObject } from "../core/chord/types.ts";
import { defineTool } from "./registry.ts";
import { asked, sandboxClientFor } from "./sandbox.ts";

const writeParams = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(4096)
    .describe("File path, relative to the workspace root or absolute under /workspace"),
  content: z.string().describe("The file's whole new content"),
});

export const writeTool = defineTool({
  name: "write",
  description:
    "Writes a file in the sandbox workspace: creates it or replaces its whole content (atomically: readers see the old file or the new one), creating missing parent folders. Reports the bytes and lines written. Files over the host's write limit (512 KB by default) are refused.",
  params: writeParams,
  replaySafe: false,
  sandbox: true,
  async execute({ params, out, signal, context }) {
    const client = sandboxClientFor(context);
    const result = await asked(() => client.write(params, signal));
    out.replace(
      `Successfully wrote ${result.bytes} bytes (${result.lines} ${result.lines === 1 ? "line" : "lines"}) to ${result.path}`,
    );
    Object.assign(out.details as JsonObject, { bytes: result.bytes, lines: result.lines });
  },
});
