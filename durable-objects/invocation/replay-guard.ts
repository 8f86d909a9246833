/**
 * How often a replay-safe call is run again after restarts that found it unfinished
 * (decision 245): once per checkpoint. A call whose every run ends in a restart (the
 * call itself kills the sandbox host, or the object) would otherwise run again at every
 * start, and its host would die again each time; a call that checkpoints (memos) made
 * progress, and may run again from there.
 */

/** Runs again after a restart with no new checkpoint in between. */
const REPLAYS_PER_CHECKPOINT = 1;

const KEY = "replays";

interface Replays {
  checkpointSeq: number | null;
  count: number;
}

/**
 * Counts one more run after a restart from `checkpointSeq`; false when the call already
 * ran again from that checkpoint `REPLAYS_PER_CHECKPOINT` times and must not run again.
 * @example if (!(await replayAllowed(ctx.storage, record.checkpointSeq))) settle(...)
 */
export async function replayAllowed(
  storage: DurableObjectStorage,
  checkpointSeq: number | null,
): Promise<boolean> {
  const last = await storage.get<Replays>(KEY);
  const count = last && last.checkpointSeq === checkpointSeq ? last.count : 0;
  if (count >= REPLAYS_PER_CHECKPOINT) return false;
  await storage.put(KEY, { checkpointSeq, count: count + 1 } satisfies Replays);
  return true;
}

/** The error a call settles with when it is not run again. */
export function replayRefused(tool: string): string {
  return `${tool} was cut off by a restart twice at the same point and is not run a third time (it may be what stopped the sandbox host or the Worker); run it again yourself if it should be`;
}
