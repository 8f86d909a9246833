import { apply, encoder, isBase } from "../../../src/core/chord/index.ts";
import type { JsonValue, Op } from "../../../src/core/chord/types.ts";
import type { ToolStartEvent } from "../../../src/core/events/types.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import { AdaptivePublisher } from "../../../src/core/publish/index.ts";
import { utf8ByteLength } from "../../../src/core/retention/index.ts";
import type { Subscribers } from "../fanout/subscribers.ts";
import type { BatchLog } from "./batch-log.ts";
import type { InvocationStore } from "./store.ts";

/** Every this-many durable batches one is a base, so recovery replays at most this many. */
export const REBASE_EVERY = 50;

/**
 * The next publication waits this long per subscriber the last one went to (decision
 * 168): a send costs the object about as much for 90 bytes as for 2 KB, so the fan-out
 * is paced by its count of sends, not its bytes. Below 100 subscribers the 100 ms
 * minimum interval rules and nothing changes; 1,000 viewers get an update a second, and
 * the object keeps most of its time for the sockets still connecting.
 */
const FANOUT_MS_PER_SUBSCRIBER = 1;

const utf8 = new TextEncoder();

/** One publication, ready to store and send: the log's batch is serialized once, here. */
interface PreparedBatch {
  /** The sink's ops: what subscribers receive. */
  ops: Op[];
  /** Whether the log stores it as a base. */
  base: boolean;
  checkpoint: { memo: { name: string; value: JsonValue } | null } | null;
  /** The log's batch (`ops`, or a base of the state after them) as UTF-8 JSON. */
  json: Uint8Array;
  /** Its size as it travels: the log's bytes when it stores `ops` itself. */
  bytes: number;
}

interface DurableOutputOptions {
  storage: DurableObjectStorage;
  log: BatchLog;
  store: InvocationStore;
  subscribers: Subscribers;
  start: ToolStartEvent;
  /** The durable state at construction (recovered, or the initial state). */
  state: ToolOutputState;
  /** Deltas since the newest base in the log (0 right after a base). */
  deltasSinceBase: number;
  /** Seq of the base written with the latest memo (kept when older batches are pruned). */
  checkpointSeq: number | null;
  /** The sink's flush: ops since the last call, the first after a seed a base. */
  flush(): Op[];
  onError(error: unknown): void;
}

/**
 * The path of one publication: flush the sink → encode for the durable stream →
 * append to the batch log → fan out to subscribers, paced by an `AdaptivePublisher` by
 * the batch's bytes and by how many subscribers it goes to.
 *
 * It keeps the durable state (what every subscriber has folded): new subscribers start
 * from it, `view()` reports it, and recovery rebuilds exactly it. Every
 * `REBASE_EVERY`th durable batch is stored as a base of that state while subscribers
 * keep receiving the small delta, so recovery is bounded without costing live bytes.
 *
 * @example
 * const out = new DurableOutput({ ...deps, flush: () => sink.flush() });
 * sink.onChange = () => out.markDirty();
 * out.flushNow(); // on completion
 */
export class DurableOutput {
  readonly #o: DurableOutputOptions;
  readonly #publisher: AdaptivePublisher<PreparedBatch>;
  readonly #encoder = encoder();
  #state: ToolOutputState;
  #deltasSinceBase: number;
  #checkpointSeq: number | null;
  #pendingCheckpoint: { memo: { name: string; value: JsonValue } | null } | null = null;
  #dirtyQueued = false;

  constructor(options: DurableOutputOptions) {
    this.#o = options;
    this.#state = options.state;
    this.#deltasSinceBase = options.deltasSinceBase;
    this.#checkpointSeq = options.checkpointSeq;
    this.#publisher = new AdaptivePublisher<PreparedBatch>({
      update: () => {
        const ops = this.#o.flush();
        return ops.length > 0 || this.#pendingCheckpoint ? this.#prepare(ops) : null;
      },
      measure: (batch) => batch.bytes,
      floorMs: () => this.#o.subscribers.count * FANOUT_MS_PER_SUBSCRIBER,
      publish: (batch) => this.#persistAndSend(batch),
      onError: options.onError,
    });
  }

  /** The durable state: what subscribers have folded so far. */
  get state(): ToolOutputState {
    return this.#state;
  }

  /**
   * The sink changed; publish as soon as pacing allows. Changes made in one synchronous
   * run (a write and its details, a producer batch) are noted once, in a microtask, so
   * they reach the log and subscribers as one publication.
   */
  markDirty(): void {
    if (this.#dirtyQueued) return;
    this.#dirtyQueued = true;
    queueMicrotask(() => {
      this.#dirtyQueued = false;
      this.#publisher.markDirty();
    });
  }

  /**
   * An input went into the call's terminal: the next change within `windowMs` (its echo)
   * is published at once rather than at the pacing deadline (decision 192).
   */
  expedite(windowMs: number): void {
    this.#publisher.expedite(windowMs);
  }

  /** Publishes whatever is pending now, bypassing pacing (completion, cancel, error). */
  flushNow(): void {
    this.#publisher.flush(true);
  }

  /**
   * Writes an output checkpoint (a base batch of the current output, unpublished writes
   * included) and, when given, memo `name` in one transaction, and records it as the
   * state a replay starts from. Subscribers receive the same publication as a delta.
   */
  checkpoint(memo: { name: string; value: JsonValue } | null = null): void {
    this.#pendingCheckpoint = { memo };
    try {
      this.#publisher.flush(true);
    } finally {
      this.#pendingCheckpoint = null;
    }
  }

  /** Stops pacing for good (the invocation settled or this instance is retiring). */
  dispose(): void {
    this.#publisher.dispose();
  }

  /**
   * Folds `ops` into the durable state and serializes the log's batch: `ops` itself, or,
   * every `REBASE_EVERY`th batch and at a checkpoint, a base of the state after them.
   */
  #prepare(ops: Op[]): PreparedBatch {
    if (ops.length > 0)
      this.#state = apply(this.#state as unknown as JsonValue, ops) as unknown as ToolOutputState;
    const checkpoint = this.#pendingCheckpoint;
    const base = isBase(ops) || checkpoint !== null || this.#deltasSinceBase >= REBASE_EVERY - 1;
    const stored: Op[] = base && !isBase(ops) ? [["r", this.#state as unknown as JsonValue]] : ops;
    const json = utf8.encode(JSON.stringify(this.#encoder.encode(stored)));
    // Paced by what travels: the delta, which only a rebase stores differently.
    const bytes = stored === ops ? json.byteLength : utf8ByteLength(JSON.stringify(ops));
    return { ops, base, checkpoint, json, bytes };
  }

  #persistAndSend({ ops, base, checkpoint, json }: PreparedBatch): void {
    const { storage, log, store } = this.#o;
    const seq = storage.transactionSync(() => {
      const at = log.appendJson(base ? "base" : "delta", json);
      if (checkpoint) {
        if (checkpoint.memo) store.setMemo(checkpoint.memo.name, checkpoint.memo.value);
        store.setCheckpoint(at);
        this.#checkpointSeq = at;
      }
      if (base) log.pruneBefore(at, this.#checkpointSeq);
      return at;
    });
    this.#deltasSinceBase = base ? 0 : this.#deltasSinceBase + 1;
    // The batch is written (synchronously, above); the output gate holds these sends
    // until that write commits, so subscribers never see output that is not durable.
    if (ops.length > 0) this.#o.subscribers.publish(this.#o.start, ops, this.#state, seq);
  }
}
