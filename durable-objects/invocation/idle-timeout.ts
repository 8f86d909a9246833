/**
 * The idle timeout of `external` invocations: an agent that stops calling the producer
 * API (crashed, disconnected, forgot `end`) must not leave its invocation running
 * forever. After `EXTERNAL_IDLE_TIMEOUT_SECONDS` without a producer call the alarm
 * settles it as an error, output kept (docs/decisions/044).
 */
export const IDLE_NOTICE_PREFIX = "[Timed out: the producer went silent";

/**
 * The notice appended to an `external` invocation ended for silence.
 * @example idleNotice(1_800_000) // "[Timed out: the producer went silent for 30 minutes; …]"
 */
export function idleNotice(timeoutMs: number): string {
  const seconds = timeoutMs / 1000;
  const span =
    seconds % 60 === 0
      ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}`
      : `${seconds} second${seconds === 1 ? "" : "s"}`;
  return `${IDLE_NOTICE_PREFIX} for ${span}, so the call was ended; the output above is what it sent until then. Send producer calls more often than EXTERNAL_IDLE_TIMEOUT_SECONDS, or end the call with "end".]`;
}
