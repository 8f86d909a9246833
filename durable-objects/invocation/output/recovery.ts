import { apply, decoder } from "../../../src/core/chord/index.ts";
import type { JsonValue } from "../../../src/core/chord/types.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import type { BatchLog } from "./batch-log.ts";

interface RecoveredOutput {
  /** The durable state: what every subscriber had folded. */
  state: ToolOutputState;
  /** Batches decoded (the newest base and the deltas after it). */
  batches: number;
  /** Deltas after that base. */
  deltasSinceBase: number;
}

/**
 * Rebuilds the durable output: reads back to the newest base batch, decodes forward
 * with a fresh decoder (the base resets its tables) and applies each batch.
 * Undefined when the log holds no base (nothing was ever published, or it settled).
 *
 * @example
 * const recovered = recoverOutput(log); // { state, batches: 12, deltasSinceBase: 11 }
 */
export function recoverOutput(log: BatchLog): RecoveredOutput | undefined {
  const batches = log.readFromLastBase();
  if (batches.length === 0) return undefined;
  const decode = decoder();
  let state: JsonValue = null;
  for (const batch of batches) state = apply(state, decode.decode(batch.wire));
  return {
    state: state as unknown as ToolOutputState,
    batches: batches.length,
    deltasSinceBase: batches.length - 1,
  };
}

/**
 * The output checkpointed at `seq` (a base batch written with a memo, or at start):
 * where a replay-safe tool resumes, so work done after its last memo is neither kept
 * twice nor lost.
 *
 * @example
 * const seeded = readCheckpoint(log, record.checkpointSeq);
 */
export function readCheckpoint(log: BatchLog, seq: number): ToolOutputState {
  const batch = log.read(seq);
  if (batch?.tag !== "base") {
    throw new Error(
      `Checkpoint batch ${seq} is missing from the batch log; cannot replay from it.`,
    );
  }
  return apply(null, decoder().decode(batch.wire)) as unknown as ToolOutputState;
}
