/**
 * A command call that waits its turn in its sandbox (decision 248) says so in its
 * `details`: `queued` is how many commands are ahead of it, and goes once it runs. Every
 * face reads it from here and says it in the same words.
 */

/** The `details` field that holds the commands ahead of a waiting call. */
const QUEUED_DETAIL = "queued";

/**
 * How many commands are ahead of a waiting call, from its details; null when it is not waiting.
 * @example queuedAheadOf({ queued: 2 }) // 2
 */
export function queuedAheadOf(details: unknown): number | null {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return null;
  const ahead = (details as Record<string, unknown>)[QUEUED_DETAIL];
  return typeof ahead === "number" && Number.isInteger(ahead) && ahead >= 0 ? ahead : null;
}

/**
 * Where a waiting call stands in its sandbox's line.
 * @example aheadWords(1) // "1 command ahead"
 */
export function aheadWords(ahead: number): string {
  if (ahead === 0) return "next in line";
  return `${ahead} ${ahead === 1 ? "command" : "commands"} ahead`;
}

/**
 * What people and the model read for a waiting call.
 * @example queuedWords(2) // "queued (2 commands ahead)"
 */
export function queuedWords(ahead: number): string {
  return `queued (${aheadWords(ahead)})`;
}

/**
 * Sets or clears the waiting mark on a call's details (an object; anything else is left).
 * @example markQueued(out.details, 3); markQueued(out.details, null);
 */
export function markQueued(details: unknown, ahead: number | null): void {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return;
  const fields = details as Record<string, unknown>;
  if (ahead === null) delete fields[QUEUED_DETAIL];
  else fields[QUEUED_DETAIL] = ahead;
}
