/**
 * `write_stdin { id, text?, keys?, eof?, wait? }`: types into a background bash call —
 * its terminal (`tty: true`) or its stdin pipe (`background: true`) — and answers when
 * the output settles (the command waits for input again, is quiet for a moment, or
 * exits), or after `wait` seconds at most, with what changed since the model's last
 * read: the new lines (or a full-screen program's screen) and whether it waits for input.
 */
import { z } from "zod";
import { execIdFor, SandboxHttpError } from "../execenv/index.ts";
import {
  INVOCATION_ID_PATTERN,
  JOB_OUTPUT_BYTES,
  JOB_OUTPUT_LINES,
  MAX_STDIN_BYTES,
  MAX_STDIN_KEYS,
  MAX_STDIN_WAIT_SECONDS,
  MODEL_TYPIST,
  STDIN_KEY_NAMES,
  STDIN_KEYS,
} from "../protocol/index.ts";
import type { ScopedCall } from "./call-scope.ts";
import { jobOf, jobStatus, outcomeValue, readNewLines, sleep, writeJobRead } from "./job-lines.ts";
import { isBackgroundCall } from "./jobs.ts";
import { defineTool } from "./registry.ts";
import { sandboxClientFor } from "./sandbox.ts";
import { isTtyCall } from "./terminal-view.ts";

/** How long the answer waits for the job's Durable Object to hold what the host printed. */
const CATCH_UP_MS = 3000;

/** Output settles in this many seconds when `wait` is not given (most answers come far sooner). */
const DEFAULT_STDIN_WAIT_SECONDS = 10;

const utf8 = new TextEncoder();

const writeStdinParams = z
  .strictObject({
    id: z
      .string()
      .regex(INVOCATION_ID_PATTERN, "must be an invocation id")
      .describe("The id of the background bash call (tty: true or background: true)"),
    text: z
      .string()
      .optional()
      .describe(
        'Text to type, as is: "\\n" is Enter, "\\u0003" Ctrl-C, "\\u0004" Ctrl-D, "\\u001b" Escape',
      ),
    keys: z
      .array(z.enum(STDIN_KEY_NAMES))
      .max(MAX_STDIN_KEYS)
      .optional()
      .describe(
        'Named keys pressed after the text, in order: "Enter", "Tab", "Escape", "Backspace", "Up", "Down", "Left", "Right", "Home", "End", "PageUp", "PageDown", "Delete", "C-c" … "C-z"',
      ),
    eof: z
      .boolean()
      .optional()
      .describe("Close the input after the text (the command reads end-of-file)"),
    wait: z
      .number()
      .min(0)
      .max(MAX_STDIN_WAIT_SECONDS)
      .optional()
      .describe(
        `Most seconds to wait for the output to settle (0-${MAX_STDIN_WAIT_SECONDS}, default ${DEFAULT_STDIN_WAIT_SECONDS}); the answer comes as soon as the command waits for input again or is quiet for half a second`,
      ),
  })
  .refine((p) => p.text !== undefined || (p.keys?.length ?? 0) > 0 || p.eof === true, {
    message: "give text, keys or eof: true",
    path: ["text"],
  })
  .refine((p) => utf8.encode(bytesOf(p, false)).length <= MAX_STDIN_BYTES, {
    message: `text and keys may have at most ${MAX_STDIN_BYTES.toLocaleString("en-US")} bytes together; send more in several calls, or write a file and have the command read it`,
    path: ["text"],
  });

/** What the keyboard sends: the text (its "\n" as the Enter key on a terminal), then the keys. */
function bytesOf(p: { text?: string; keys?: string[] }, tty: boolean): string {
  const text = p.text ?? "";
  return (
    (tty ? text.replaceAll("\n", "\r") : text) + (p.keys ?? []).map((k) => STDIN_KEYS[k]).join("")
  );
}

/** Waits until the job's DO holds `bytes` of output and, once the command exited, has settled. */
async function caughtUp(target: ScopedCall, id: string, bytes: number, exited: boolean) {
  const deadline = Date.now() + CATCH_UP_MS;
  for (;;) {
    const view = outcomeValue(await target.view(), id);
    // A settled view's state may trail its last write by a pacing interval: both must hold.
    const done =
      (!exited || view.status !== "running") && view.state.truncation.totalBytes >= bytes;
    if (done || Date.now() >= deadline) return;
    await sleep(50);
  }
}

export const writeStdinTool = defineTool({
  name: "write_stdin",
  description:
    'Types into a background bash call: its terminal (bash with tty: true) or its stdin (background: true). text is typed as is ("\\n" is Enter, "\\u0003" Ctrl-C); keys names special keys (Enter, Up, Escape, C-c, …); eof: true closes the input. Answers when the output settles — the command waits for input again, or is quiet for half a second, or ends — or after wait seconds, with the lines it printed since your last read, the screen for full-screen programs (less, vim, top), and whether it now waits for input ("[waiting for input: …]").',
  params: writeStdinParams,
  output: { retain: "head", maxBytes: JOB_OUTPUT_BYTES + 2048, maxLines: JOB_OUTPUT_LINES + 8 },
  // Input is not idempotent: a re-execution would type it twice.
  replaySafe: false,
  async execute({ params, out, signal, context }) {
    const target = jobOf(context, params.id);
    const view = outcomeValue(await target.view(), params.id);
    if (!isBackgroundCall(view)) {
      throw new Error(
        `write_stdin types into a background bash call (bash with tty: true or background: true); ${params.id} is not one`,
      );
    }
    if (view.status !== "running") {
      throw new Error(
        `${params.id} has ended (${jobStatus(view)}); job_output {"id":"${params.id}"} gives its output`,
      );
    }
    const client = sandboxClientFor({ env: context.env, sandbox: view.sandbox });
    const data = bytesOf(params, isTtyCall(view));
    const waitMs = Math.round((params.wait ?? DEFAULT_STDIN_WAIT_SECONDS) * 1000);
    let state: Awaited<ReturnType<typeof client.input>>;
    try {
      const typing = client.input(
        await execIdFor(params.id),
        { data, eof: params.eof === true, waitMs },
        signal,
      );
      // Everyone watching sees that this input was the model's (decision 191).
      const bytes = utf8.encode(data).length + (params.eof ? 1 : 0);
      const noted = target.noteInput({ by: MODEL_TYPIST, at: Date.now(), bytes });
      [state] = await Promise.all([typing, noted]);
    } catch (err) {
      if (err instanceof SandboxHttpError && err.status < 500) {
        throw new Error(`${params.id}: ${err.reason}`);
      }
      throw err;
    }
    await caughtUp(target, params.id, state.totalBytes, state.exited);
    const read = await readNewLines(context.env, target, params.id, context.toolCallId, Date.now());
    writeJobRead(out, read, read.view.status === "running" ? state : null);
  },
});
