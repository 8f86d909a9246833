/**
 * The caps of the arguments a model may give the steering tools (docs/steering.md):
 * the server checks them (src/tools) and every client that describes the tools to a
 * model (the pi extension) states them, both from here.
 */

/** Most lines a bash call may ask to see: `head`, `tail`, or the two together. */
export const MAX_WINDOW_LINES = 10_000;
/** Largest byte budget (`maxBytes`) a bash call may ask for (256 KiB). */
export const MAX_WINDOW_BYTES = 256 * 1024;
/** Longest `timeout` or `idleTimeout` of a bash call: one day. */
export const MAX_BASH_TIMEOUT_SECONDS = 86_400;
/** Longest `wait` of job_output: as long as a result poll waits. */
export const MAX_JOB_WAIT_SECONDS = 30;
