// zod/mini rather than zod's chaining API: the same checks and messages at a fraction
// of the code to load, which keeps the host's idle memory down (decision 038).
import type { Context } from "hono";
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";
import {
  EXEC_ID_PATTERN,
  GREP_MAX_CONTEXT,
  MAX_COMMAND_BYTES,
  MAX_READ_LINE_CHARS,
  MAX_STDIN_BYTES,
  MAX_STDIN_WAIT_SECONDS,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
} from "../src/protocol/index.ts";
import { SandboxError } from "./errors.ts";

// zod/mini ships no messages of its own; these are the English ones zod uses by default.
z.config(en());

const relPath = z.string().check(z.maxLength(4096));
const lineCount = (max: number) => z.int().check(z.minimum(1), z.maximum(max));

/** Upper bounds on what a caller may ask for, so no request can make the host buffer unbounded text. */
const LIMIT_BOUNDS = {
  maxBytes: 4 * 1024 * 1024,
  maxLines: 100_000,
  timeoutSec: 86_400,
} as const;

/** A terminal's size, within the bounds a tty call may ask for (src/protocol/tool-caps.ts). */
export const terminalSizeSchema = z.object({
  cols: z.int().check(z.minimum(TTY_MIN_SIZE.cols), z.maximum(TTY_MAX_SIZE.cols)),
  rows: z.int().check(z.minimum(TTY_MIN_SIZE.rows), z.maximum(TTY_MAX_SIZE.rows)),
});

/** Body of `POST /v1/exec/:execId/input` (its bytes are checked against `MAX_STDIN_BYTES` after). */
export const inputRequestSchema = z.object({
  data: z.optional(z.string().check(z.maxLength(MAX_STDIN_BYTES))),
  eof: z.optional(z.boolean()),
  waitMs: z.optional(z.int().check(z.minimum(0), z.maximum(MAX_STDIN_WAIT_SECONDS * 1000))),
});

export const execRequestSchema = z.object({
  execId: z
    .string()
    .check(z.regex(EXEC_ID_PATTERN, "execId must be 1-128 letters, digits, '_' or '-'")),
  command: z.string().check(z.minLength(1), z.maxLength(256 * 1024)),
  cwd: z.optional(relPath),
  env: z.optional(z.record(z.string(), z.string())),
  timeoutSec: z.optional(z.number().check(z.positive(), z.maximum(LIMIT_BOUNDS.timeoutSec))),
  idleTimeoutSec: z.optional(z.number().check(z.positive(), z.maximum(LIMIT_BOUNDS.timeoutSec))),
  limits: z.optional(
    z.object({
      retain: z.optional(z.enum(["head", "tail"])),
      maxBytes: z.optional(z.int().check(z.minimum(0), z.maximum(LIMIT_BOUNDS.maxBytes))),
      maxLines: z.optional(z.int().check(z.minimum(0), z.maximum(LIMIT_BOUNDS.maxLines))),
    }),
  ),
  tty: z.optional(terminalSizeSchema),
  stdin: z.optional(z.boolean()),
});

export const readRequestSchema = z.object({
  path: relPath.check(z.minLength(1)),
  offset: z.optional(lineCount(Number.MAX_SAFE_INTEGER)),
  limit: z.optional(lineCount(100_000)),
  maxLineChars: z.optional(lineCount(MAX_READ_LINE_CHARS)),
});

export const grepRequestSchema = z.object({
  pattern: z.string().check(z.minLength(1), z.maxLength(4096)),
  path: z.optional(relPath),
  glob: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))),
  ignoreCase: z.optional(z.boolean()),
  literal: z.optional(z.boolean()),
  context: z.optional(z.int().check(z.minimum(0), z.maximum(GREP_MAX_CONTEXT))),
  limit: z.optional(lineCount(10_000)),
});

export const globRequestSchema = z.object({
  pattern: z.string().check(z.minLength(1), z.maxLength(1024)),
  path: z.optional(relPath),
  limit: z.optional(lineCount(100_000)),
});

/**
 * Null when the command and its variables fit what exec accepts, else the message of
 * the 400 that names the limit.
 * @example execTooLong({ command: "x".repeat(200_000) }) // "command is 200,000 bytes; ..."
 */
export function execTooLong(req: { command: string; env?: Record<string, string> }): string | null {
  const bytes = Buffer.byteLength(req.command);
  const limit = MAX_COMMAND_BYTES.toLocaleString("en-US");
  if (bytes > MAX_COMMAND_BYTES) {
    return `command is ${bytes.toLocaleString("en-US")} bytes; a command may have at most ${limit} bytes (the kernel's limit on one argument). Write a longer script to a file in the workspace and run that file`;
  }
  for (const [name, value] of Object.entries(req.env ?? {})) {
    if (Buffer.byteLength(`${name}=${value}`) > MAX_COMMAND_BYTES) {
      return `env variable '${name.slice(0, 64)}' is longer than ${limit} bytes (the kernel's limit on one variable); pass that much data in a file instead`;
    }
  }
  return null;
}

export const findRequestSchema = globRequestSchema;

export const lsRequestSchema = z.object({
  path: z.optional(relPath),
  limit: z.optional(lineCount(100_000)),
});

export const writeRequestSchema = z.object({
  path: relPath.check(z.minLength(1)),
  content: z.string(),
});

export const editRequestSchema = z.object({
  path: relPath.check(z.minLength(1)),
  edits: z.array(z.object({ oldText: z.string(), newText: z.string() })).check(z.minLength(1)),
});

/**
 * A request's JSON body checked against its schema; anything else is a `bad_request`
 * naming each field that failed.
 * @example const req = await parseBody(c, readRequestSchema);
 */
export async function parseBody<S extends z.ZodMiniType>(
  c: Context,
  schema: S,
): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new SandboxError("bad_request", "request body must be a JSON object");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
    throw new SandboxError("bad_request", `invalid request: ${issues.join("; ")}`);
  }
  return parsed.data;
}
