/**
 * Live progress of a running invocation as MCP `notifications/progress` values:
 * `progress` is the number of output bytes so far (strictly increasing: a view that
 * brought no new bytes sends nothing), `message` the latest non-empty line, cut short.
 */
import type { ToolOutputState } from "../output/types.ts";

/** Longest `message`, in UTF-16 units, before it is cut with "…". */
export const PROGRESS_MESSAGE_MAX = 120;

/** How often a running call's view is read for progress: 1 s (docs/decisions/103). */
export const PROGRESS_INTERVAL_MS = 1000;

export interface ProgressValue {
  progress: number;
  message: string;
}

/**
 * The last non-empty line of the text, whitespace-trimmed and cut to `max` units.
 * @example latestLine("a\nbb\n\n") // "bb"
 */
export function latestLine(text: string, max: number = PROGRESS_MESSAGE_MAX): string {
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1);
    const line = text.slice(start + 1, end).trim();
    if (line !== "") return line.length > max ? `${line.slice(0, max - 1)}…` : line;
    if (start < 0) break;
    end = start;
  }
  return "";
}

/** Turns successive views into progress values that only ever increase. */
export class ProgressTracker {
  #last = 0;

  /**
   * The value to send for `state`, or null when it brought no new output.
   * @example tracker.next(view.state) // { progress: 1024, message: "line 12" }
   */
  next(state: ToolOutputState): ProgressValue | null {
    const progress = state.truncation.totalBytes;
    if (progress <= this.#last) return null;
    this.#last = progress;
    const first = state.content[0];
    return { progress, message: latestLine(first?.type === "text" ? first.text : "") };
  }
}
