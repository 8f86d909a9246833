/**
 * Live progress of a running invocation as MCP `notifications/progress` values:
 * `progress` is the number of output bytes so far (strictly increasing: a read that
 * brought no new bytes sends nothing), `message` the latest non-empty line, cut short.
 * Both come from the DO's small progress read, never from the whole view.
 */
import type { ProgressRead } from "../protocol/index.ts";

/** Longest `message`, in UTF-16 units, before it is cut with "…" (the DO cuts it). */
export { LATEST_LINE_MAX as PROGRESS_MESSAGE_MAX, latestLine } from "../core/output/index.ts";

/** How often a running call's progress is read: 1 s (docs/decisions/103). */
export const PROGRESS_INTERVAL_MS = 1000;

export interface ProgressValue {
  progress: number;
  message: string;
}

/** Turns successive progress reads into progress values that only ever increase. */
export class ProgressTracker {
  #last = 0;

  /**
   * The value to send for `read`, or null when it brought no new output.
   * @example tracker.next({ bytes: 1024, lines: 12, lastLine: "line 12" }) // { progress: 1024, message: "line 12" }
   */
  next(read: ProgressRead): ProgressValue | null {
    if (read.bytes <= this.#last) return null;
    this.#last = read.bytes;
    return { progress: read.bytes, message: read.lastLine };
  }
}
