/**
 * The contract between Invocation DOs, the Worker and a run's Run DO
 * (docs/decisions/122): the notes a call sends as it starts, progresses and settles, and
 * the Run DO's RPC surface.
 */
import type { RunCall } from "../core/events/run-call.ts";

/** A note from an Invocation DO. `settled` carries everything, so it heals a lost `started`. */
export type RunNote =
  | { kind: "started"; call: RunCall }
  | { kind: "progress"; toolCallId: string; totalLines: number; totalBytes: number }
  | { kind: "settled"; call: RunCall };

/** The RPC surface of `RunDO`. */
export interface RunApi {
  note(note: RunNote): Promise<void>;
  calls(): Promise<RunCall[]>;
  /** The sandbox this run owns (`"sandbox": "new"`, decision 221), or null before its first call. */
  sandbox(): Promise<string | null>;
  /** Makes `id` the run's sandbox unless it has one; answers the one it has (first claim wins). */
  claimSandbox(id: string): Promise<string>;
}
