import { apply, decoder, isBase } from "../chord/index.ts";
import type { JsonValue, WireOp } from "../chord/types.ts";
import type { ToolOutputState } from "../output/types.ts";
import { isRecord } from "./errors.ts";

/** What became of one `tool_update`. */
export type ReplicaOutcome =
  | { kind: "applied" }
  /** Dropped while waiting for the base the replica asked for. */
  | { kind: "skipped" }
  /** The replica cannot follow this stream any more; it needs a base batch. */
  | { kind: "needs_base"; reason: string };

/**
 * The client's copy of one invocation's `ToolOutputState`, folded from the ops of
 * one stream at a time. Each stream (a connection, or a resync on it) gets a fresh
 * decoder and must start with a base batch; until it does, deltas are a gap.
 *
 * @example
 * const replica = new InvocationReplica();
 * replica.receive([["r", initialState]]); // { kind: "applied" }
 * replica.state; // initialState
 */
export class InvocationReplica {
  /** The last state folded from a base and its deltas; kept across reconnects so a view never goes blank. */
  state: ToolOutputState | null = null;
  private stream = decoder();
  private phase: "fresh" | "resyncing" | "synced" = "fresh";

  /** Whether the replica follows its current stream (it has seen the stream's base). */
  get synced(): boolean {
    return this.phase === "synced";
  }

  /** A new connection: the next update must be a base. */
  newStream(): void {
    this.phase = "fresh";
  }

  /** A base was requested on the current connection: skip deltas until it arrives. */
  awaitBase(): void {
    this.phase = "resyncing";
  }

  receive(ops: WireOp[]): ReplicaOutcome {
    const base = isBase(ops);
    if (!base && this.phase === "resyncing") return { kind: "skipped" };
    if (!base && this.phase === "fresh") {
      return { kind: "needs_base", reason: "the stream did not start with a base batch" };
    }
    if (base) this.stream = decoder();
    try {
      const next = apply(this.state as JsonValue, this.stream.decode(ops));
      if (!isOutputState(next)) {
        return { kind: "needs_base", reason: "the folded value is not a tool output state" };
      }
      this.state = next;
      this.phase = "synced";
      return { kind: "applied" };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.phase = "fresh";
      return { kind: "needs_base", reason };
    }
  }
}

function isOutputState(value: unknown): value is ToolOutputState {
  return (
    isRecord(value) &&
    Array.isArray(value.content) &&
    isRecord(value.truncation) &&
    typeof value.truncation.totalBytes === "number"
  );
}
