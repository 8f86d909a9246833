import { apply, decoder, isBase } from "../core/chord/index.ts";
import type { JsonValue, Op, WireOp } from "../core/chord/types.ts";
import { isOutputState, outputStateError } from "../core/output/state.ts";
import type { ToolOutputState } from "../core/output/types.ts";

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
 * decoder and must start with a base batch, unless it resumes after the seq the replica
 * is at; until then, deltas are a gap.
 *
 * @example
 * const replica = new InvocationReplica();
 * replica.receive([["r", initialState]]); // { kind: "applied" }
 * replica.state; // initialState
 */
export class InvocationReplica {
  /** The last state folded from a base and its deltas; kept across reconnects so a view never goes blank. */
  state: ToolOutputState | null = null;
  /**
   * Storage seq of the update `state` is at, when the server named it; null once the
   * replica lost track (a gap, a pending resync). What a new connection resumes after.
   */
  seq: number | null = null;
  #stream = decoder();
  #phase: "fresh" | "resyncing" | "synced" = "fresh";

  /** Whether the replica follows its current stream (it has seen the stream's base). */
  get synced(): boolean {
    return this.#phase === "synced";
  }

  /** A new connection: the next update must be a base. */
  newStream(): void {
    this.#phase = "fresh";
  }

  /**
   * A new connection that resumes after `seq` (docs/decisions/111): its updates are the
   * deltas after it, on a fresh decoder (or a base, if the server could not resume).
   * Returns false, and expects a base, when there is nothing to resume from.
   */
  resumeStream(): boolean {
    if (this.state === null || this.seq === null || this.#phase !== "synced") {
      this.newStream();
      return false;
    }
    this.#stream = decoder();
    return true;
  }

  /** A base was requested on the current connection: skip deltas until it arrives. */
  awaitBase(): void {
    this.#phase = "resyncing";
    this.seq = null;
  }

  receive(ops: WireOp[], seq?: number): ReplicaOutcome {
    const base = isBase(ops);
    if (!base && this.#phase === "resyncing") return { kind: "skipped" };
    if (!base && this.#phase === "fresh") {
      return { kind: "needs_base", reason: "the stream did not start with a base batch" };
    }
    if (base) this.#stream = decoder();
    try {
      const decoded = this.#stream.decode(ops);
      // `apply` works in place: fold into a copy of the touched containers, commit only a valid result.
      const next = apply(copyAlongPaths(this.state as JsonValue, decoded), decoded);
      if (!isOutputState(next)) {
        this.#phase = "fresh";
        this.seq = null;
        const problem = outputStateError(next)?.message;
        return {
          kind: "needs_base",
          reason: `the folded value is not a tool output state: ${problem}`,
        };
      }
      this.state = next;
      this.#phase = "synced";
      this.seq = seq ?? null;
      return { kind: "applied" };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#phase = "fresh";
      this.seq = null;
      return { kind: "needs_base", reason };
    }
  }
}

/**
 * A shallow copy of `root` and of every container on the ops' paths, so applying the
 * ops to it leaves `root` untouched. Costs one copy per touched container (the content
 * array, one block, the truncation record), not a copy of the text.
 */
function copyAlongPaths(root: JsonValue, ops: readonly Op[]): JsonValue {
  if (ops[0]?.[0] === "r" || !isContainer(root)) return root;
  const copy = shallowCopy(root);
  for (const op of ops) {
    if (op[0] === "r") continue;
    let node: JsonValue = copy;
    for (const seg of op[1]) {
      if (!isContainer(node) || !Object.hasOwn(node, seg)) break;
      const child = (node as Record<string | number, JsonValue>)[seg] as JsonValue;
      if (!isContainer(child)) break;
      const own = shallowCopy(child);
      Object.defineProperty(node, seg, {
        value: own,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      node = own;
    }
  }
  return copy;
}

function isContainer(value: JsonValue): value is JsonValue[] | { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null;
}

function shallowCopy(
  value: JsonValue[] | { [key: string]: JsonValue },
): JsonValue[] | { [key: string]: JsonValue } {
  return Array.isArray(value) ? value.slice() : { ...value };
}
