/**
 * Toolwire's tools as MCP tools: each one's JSON Schema, a description that states its
 * output bound, and the hints MCP clients use to decide what to confirm. Arguments are
 * checked by the tool's own `parse`, so a bad call gets the HTTP API's message (the
 * argument and what was expected).
 */
import type {
  CallToolResult,
  McpServer,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { JsonValue } from "../core/chord/types.ts";
import { formatCount, formatSize } from "../core/output/index.ts";
import {
  JOB_OUTPUT_BYTES,
  JOB_OUTPUT_LINES,
  OUTPUT_BYTES,
  OUTPUT_LINES,
} from "../protocol/index.ts";
import { type AnyTool, ToolArgsError } from "../tools/index.ts";

/**
 * The tools an MCP client sees by default: the source-bounded sandbox and web tools, the
 * background-job tools and `expose_port` (a preview URL of a port; decision 182).
 */
export const MCP_TOOLS = [
  "bash",
  "read",
  "grep",
  "glob",
  "find",
  "ls",
  "write",
  "edit",
  "web_fetch",
  "jobs",
  "job_output",
  "kill",
  "write_stdin",
  "expose_port",
] as const;

const ANNOTATIONS: Record<string, ToolAnnotations> = {
  bash: {
    title: "Run a shell command",
    readOnlyHint: false,
    destructiveHint: true,
    openWorldHint: false,
  },
  read: { title: "Read a file", readOnlyHint: true, openWorldHint: false },
  grep: { title: "Search file contents", readOnlyHint: true, openWorldHint: false },
  glob: { title: "Find files by name", readOnlyHint: true, openWorldHint: false },
  find: { title: "Find files (pi's find)", readOnlyHint: true, openWorldHint: false },
  ls: { title: "List a directory", readOnlyHint: true, openWorldHint: false },
  write: {
    title: "Write a file",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  edit: {
    title: "Edit a file",
    readOnlyHint: false,
    destructiveHint: true,
    openWorldHint: false,
  },
  web_fetch: { title: "Fetch a web page", readOnlyHint: true, openWorldHint: true },
  jobs: { title: "List background jobs", readOnlyHint: true, openWorldHint: false },
  job_output: { title: "Read a background job", readOnlyHint: true, openWorldHint: false },
  write_stdin: {
    title: "Type into a background job",
    readOnlyHint: false,
    destructiveHint: true,
    openWorldHint: false,
  },
  kill: {
    title: "Stop a call",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  // Not idempotent: each call draws a new URL and ends the port's earlier one. Open world:
  // anyone with the URL reaches the sandbox's port.
  expose_port: {
    title: "Share a port as a URL",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
};

const lines = formatCount(OUTPUT_LINES);
const size = formatSize(OUTPUT_BYTES);
const jobLines = formatCount(JOB_OUTPUT_LINES);
const jobSize = formatSize(JOB_OUTPUT_BYTES);

/** How each built-in's output is bounded, in the words a model should read. */
const BOUNDS: Record<string, string> = {
  bash: `the last ${lines} lines or ${size} unless head, tail or maxBytes choose another window; the complete output is saved to a read-only file that read and grep open when given its path: the footer names it and the read call that shows what is not shown. Long commands: a client without the MCP tasks extension should run them with background: true (answers at once; job_output reads on, kill stops, jobs lists), since a call that waits may be cut off by the client's own request timeout`,
  read: `at most ${lines} lines or ${size} from the offset; the footer gives the offset to continue from`,
  grep: `the first limit matches, at most ${size}; the footer says when it was cut`,
  glob: `the first limit paths, at most ${size}; the footer says when it was cut`,
  find: `the first limit paths, at most ${size}; the footer says when it was cut`,
  ls: `the first limit entries, at most ${size}; the footer says when it was cut`,
  write: "one line: the bytes and lines written",
  edit: `the first ${lines} lines or ${size} of the diff`,
  web_fetch: `the first ${size} of the page's text; the footer says when it was cut`,
  jobs: "the newest 50 background calls",
  job_output: `at most ${jobLines} new lines or ${jobSize} a call; the footer says where the job stands and whether more lines follow`,
  kill: "the call's own bounded output",
  expose_port: "the URL on the first line, then one line: until when and the path form for clients",
  write_stdin: `at most ${jobLines} new lines or ${jobSize}, or the screen of a full-screen program, and one line that says whether the command waits for input`,
};

/**
 * The sentence a tool's MCP description ends with: how its output is bounded.
 * @example outputBound(bashTool) // "Output bound: the last 2,000 lines or 50 KB; …"
 */
function outputBound(tool: AnyTool): string {
  const { retain, maxBytes, maxLines } = tool.output;
  const bound =
    BOUNDS[tool.name] ??
    `the ${retain === "tail" ? "last" : "first"} ${maxLines.toLocaleString("en-US")} lines or ${Math.floor(maxBytes / 1024)} KB`;
  return `Output bound: ${bound}. Each call is a Toolwire invocation with a live viewer (link in the result).`;
}

/** A call's arguments as received, and what the tool's `parse` made of them (parsed once, here). */
export interface CheckedArgs {
  raw: JsonValue;
  params: unknown;
}

/**
 * A Standard Schema whose validation is the tool's own `parse`, and whose JSON Schema is
 * the tool's. Its output keeps the parse's result beside the raw arguments, so the
 * invocation's DO is handed them parsed.
 */
function argsSchema(tool: AnyTool): StandardSchemaWithJSON<JsonValue, CheckedArgs> {
  const schema = tool.parameters as Record<string, unknown>;
  return {
    "~standard": {
      version: 1,
      vendor: "toolwire",
      validate(value: unknown) {
        try {
          const params = tool.parse(value);
          return { value: { raw: value as JsonValue, params } };
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          return {
            issues: [{ message: err instanceof ToolArgsError ? message : `args: ${message}` }],
          };
        }
      },
      jsonSchema: { input: () => schema, output: () => schema },
    },
  };
}

/** Runs one call of `tool` with its (already validated) arguments. */
type ToolCallHandler = (
  tool: AnyTool,
  args: CheckedArgs,
  ctx: ServerContext,
) => Promise<CallToolResult>;

/**
 * Registers `tools` on `server`, each call handled by `handle`.
 * @example registerToolwireTools(server, [getTool("bash")!], (tool, args, ctx) => run(...))
 */
export function registerToolwireTools(
  server: McpServer,
  tools: readonly AnyTool[],
  handle: ToolCallHandler,
): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: ANNOTATIONS[tool.name]?.title,
        description: `${tool.description} ${outputBound(tool)}`,
        inputSchema: argsSchema(tool),
        annotations: ANNOTATIONS[tool.name] ?? { readOnlyHint: false, openWorldHint: false },
      },
      (args, ctx) => handle(tool, args, ctx),
    );
  }
}
