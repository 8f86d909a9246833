/**
 * Resuming a subscription after the id of the last event a subscriber has (SSE
 * `Last-Event-ID`, or `?after=` on either route): the batches after that id, re-read
 * from the batch log, instead of a fresh base. See docs/decisions/111.
 *
 * The log holds the newest base and every batch since (older ones are pruned), so a
 * subscriber is resumable when its id is that base's seq or later, and no later than
 * the newest batch. Anything else gets a base, as a new subscriber does.
 */
import { decoder } from "../../../src/core/chord/index.ts";
import type { Op } from "../../../src/core/chord/types.ts";
import type { BatchLog } from "../output/batch-log.ts";

/** One durable publication to resend: its storage seq and its ops (decoded). */
export interface ResumedBatch {
  seq: number;
  ops: Op[];
}

/** Largest id a subscriber may name (beyond it, a base as for any unknown id). */
const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER;

/**
 * The event id a subscriber resumes after: `Last-Event-ID`, else `?after=`; null when
 * neither is a plain decimal integer (then the subscriber gets a base).
 * @example resumeAfterOf(new Request("http://do/socket?after=12")) // 12
 */
export function resumeAfterOf(request: Request): number | null {
  const raw =
    request.headers.get("Last-Event-ID") ?? new URL(request.url).searchParams.get("after");
  if (raw === null || !/^\d{1,16}$/.test(raw.trim())) return null;
  const after = Number(raw.trim());
  return after <= MAX_EVENT_ID ? after : null;
}

/**
 * The batches after `after`, oldest first (empty: the subscriber is up to date), or
 * null when the log cannot bring a subscriber at `after` up to date without a base, or
 * when those batches are no smaller than a base (`baseSize`, the JSON length of the
 * state): resuming never costs more than starting over.
 *
 * @example
 * const resumed = resumeBatches(log, 41, JSON.stringify(state).length); // [{ seq: 42, ops }, …] or null
 */
export function resumeBatches(
  log: BatchLog,
  after: number,
  baseSize: number,
): ResumedBatch[] | null {
  const stored = log.readFromLastBase();
  const first = stored[0];
  const last = stored.at(-1);
  if (!first || !last || after < first.seq || after > last.seq) return null;
  let size = 0;
  for (const batch of stored) if (batch.seq > after) size += JSON.stringify(batch.wire).length;
  if (size >= baseSize) return null;
  // The base resets the codec's tables: decode forward from it with a fresh decoder.
  const decode = decoder();
  const resumed: ResumedBatch[] = [];
  for (const batch of stored) {
    const ops = decode.decode(batch.wire);
    if (batch.seq > after) resumed.push({ seq: batch.seq, ops });
  }
  return resumed;
}
