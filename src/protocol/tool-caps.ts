/**
 * The caps of the arguments a model may give the steering tools (docs/steering.md):
 * the server checks them (src/tools) and every client that describes the tools to a
 * model (the pi extension) states them, both from here.
 */
import { DEFAULT_OUTPUT_POLICY } from "../core/output/types.ts";

/** Most lines a bash call may ask to see: `head`, `tail`, or the two together. */
export const MAX_WINDOW_LINES = 10_000;
/** Largest byte budget (`maxBytes`) a bash call may ask for (256 KiB). */
export const MAX_WINDOW_BYTES = 256 * 1024;
/** Longest `timeout` or `idleTimeout` of a bash call: one day. */
export const MAX_BASH_TIMEOUT_SECONDS = 86_400;
/** Longest `wait` of job_output: as long as a result poll waits. */
export const MAX_JOB_WAIT_SECONDS = 30;

/** A tty call's terminal size when it names none: 120 columns, 40 rows. */
export const TTY_DEFAULT_SIZE = { cols: 120, rows: 40 } as const;
/** The smallest terminal a tty call may ask for (narrower, most full-screen programs refuse to draw). */
export const TTY_MIN_SIZE = { cols: 20, rows: 5 } as const;
/** The largest terminal a tty call may ask for: one screen stays under 100,000 cells. */
export const TTY_MAX_SIZE = { cols: 400, rows: 200 } as const;
/** Most bytes one write_stdin sends (text and keys together). */
export const MAX_STDIN_BYTES = 64 * 1024;
/** Most keys one write_stdin names. */
export const MAX_STDIN_KEYS = 256;
/** Longest `wait` of write_stdin: as long as job_output's. */
export const MAX_STDIN_WAIT_SECONDS = MAX_JOB_WAIT_SECONDS;
// The output caps: what one tool call shows when it asks for no other window. The
// default policy is the pure core's (src/core/output/types.ts, which cannot import
// this file); every other place reads them from here, and
// test/node/protocol/tool-caps.test.ts fails if one is written out again elsewhere.

/** Lines a call shows by default (bash's tail, `read`, a diff): 2,000. */
export const OUTPUT_LINES = DEFAULT_OUTPUT_POLICY.maxLines;
/** Bytes a call shows by default (bash's window, `read`, the lookups, a page's text): 50 KiB. */
export const OUTPUT_BYTES = DEFAULT_OUTPUT_POLICY.maxBytes;
/** Longest line `read` gives whole; a longer one is cut, with a notice: 2,000 characters. */
export const READ_LINE_CHARS = 2000;
/** Most lines one job_output gives; the next call continues. */
export const JOB_OUTPUT_LINES = 2000;
/** Most bytes of lines one job_output gives (its sink keeps room for the footer): 48 KiB. */
export const JOB_OUTPUT_BYTES = 48 * 1024;
