/**
 * The run index's vocabulary: one call of a run as the run lists it, and the messages
 * of a run socket (`/v1/runs/:runId/socket`). Shared by the Run DO, the Worker, the run
 * page and the CLI; depends on nothing.
 */

/** A call as the run lists it. */
export interface RunCall {
  toolCallId: string;
  turnId: string;
  tool: string;
  /** A short one-line summary of the args: bash's command, else compact JSON. */
  summary: string;
  status: "running" | "done" | "error" | "cancelled";
  /** An `error` call stopped by a time limit: which one, and its seconds (from the args). */
  stoppedBy?: { limit: "timeout" | "idleTimeout"; seconds: number | null };
  /** An `error` call whose command exited with a status of its own (1–255). */
  exitCode?: number;
  createdAt: number;
  settledAt: number | null;
  totalLines: number;
  totalBytes: number;
}

/**
 * A message of the run socket: the list in `calls` batches, then `synced`, then one
 * `call` per change (and `pong` for a client's `{"type":"ping"}`).
 */
export type RunMessage =
  | { type: "calls"; calls: RunCall[] }
  | { type: "synced" }
  | { type: "call"; call: RunCall }
  | { type: "pong" };
