/**
 * The output of a running invocation: the sink tool code writes to and the durable
 * publication path behind it (durable-output.ts), with the first error that path threw.
 * The sink is created on demand and seeded from the durable state after a restart.
 */
import type { ToolStartEvent } from "../../../src/core/events/index.ts";
import {
  DEFAULT_OUTPUT_POLICY,
  type OutputPolicy,
  ToolOutputSink,
  type ToolOutputState,
} from "../../../src/core/output/index.ts";
import type { Subscribers } from "../fanout/subscribers.ts";
import type { Settlement } from "../settle-table.ts";
import type { BatchLog } from "./batch-log.ts";
import { DurableOutput } from "./durable-output.ts";
import { recoverOutput } from "./recovery.ts";
import type { InvocationStore } from "./store.ts";

interface InvocationOutputOptions {
  storage: DurableObjectStorage;
  log: BatchLog;
  store: InvocationStore;
  subscribers: Subscribers;
  /** Called before every flush of the sink (a subclass's seam; a throw fails the flush). */
  beforeFlush(): void;
  /** The publication path threw for the first time. */
  onFailure(error: unknown): void;
}

/**
 * @example
 * const output = new InvocationOutput({ ...deps, beforeFlush, onFailure });
 * output.open(start, state, 0, null).checkpoint(); // the start base
 * output.attach(policy, null).write("hello");
 */
export class InvocationOutput {
  readonly #o: InvocationOutputOptions;
  #durable: DurableOutput | null = null;
  #sink: ToolOutputSink | null = null;
  #failure: unknown = null;

  constructor(options: InvocationOutputOptions) {
    this.#o = options;
  }

  /** The durable publication path, while running. */
  get durable(): DurableOutput | null {
    return this.#durable;
  }

  /** The attached sink, if any. */
  get sink(): ToolOutputSink | null {
    return this.#sink;
  }

  /** The first error the publication path threw, or null. */
  get failure(): unknown {
    return this.#failure;
  }

  /** Opens the durable path over `state` (the initial state, or what recovery rebuilt). */
  open(
    start: ToolStartEvent,
    state: ToolOutputState,
    deltasSinceBase: number,
    checkpointSeq: number | null,
  ): DurableOutput {
    const { storage, log, store, subscribers } = this.#o;
    this.#durable = new DurableOutput({
      ...{ storage, log, store, subscribers, start, state, deltasSinceBase, checkpointSeq },
      flush: () => {
        this.#o.beforeFlush();
        return this.#sink?.flush() ?? [];
      },
      onError: (error) => {
        if (this.#failure !== null) return;
        this.#failure = error;
        this.#o.onFailure(error);
      },
    });
    return this.#durable;
  }

  /**
   * Rebuilds the durable path of a running invocation from the batch log (recovery.ts)
   * and returns how many batches that decoded.
   */
  recover(start: ToolStartEvent, record: { toolCallId: string; checkpointSeq: number | null }) {
    const recovered = recoverOutput(this.#o.log);
    if (!recovered)
      throw new Error(`Invocation ${record.toolCallId} is running but its batch log has no base.`);
    this.open(start, recovered.state, recovered.deltasSinceBase, record.checkpointSeq);
    return recovered.batches;
  }

  /** A new sink over `seed` (or the initial state); its first flush is a base of it. */
  attach(policy: OutputPolicy, seed: ToolOutputState | null): ToolOutputSink {
    this.#sink = new ToolOutputSink({ policy, onChange: () => this.#durable?.markDirty() });
    if (seed) this.#sink.seed(seed);
    return this.#sink;
  }

  /** The sink, created over the durable state when none is attached (after a restart). */
  live(policy: OutputPolicy = DEFAULT_OUTPUT_POLICY): ToolOutputSink {
    return this.#sink ?? this.attach(policy, this.#durable?.state ?? null);
  }

  /**
   * Ends the output as `settlement` says: its last words, then a forced last publication,
   * then both let go of. Returns the final state, or null when that publication broke
   * (nothing is closed; the caller settles again as unpublishable).
   */
  finish(settlement: Settlement, policy: OutputPolicy | undefined): ToolOutputState | null {
    const durable = this.#durable;
    if (!durable) return null;
    const { last, freshSink } = settlement;
    // A broken sink is dropped; a fresh one over the published state carries the notice.
    const sink = freshSink
      ? this.attach(this.live(policy).policy, durable.state)
      : last && this.live(policy);
    if (last && "error" in last) sink?.fail(last.error);
    else if (last) sink?.appendNotice(last.notice);
    durable.flushNow();
    if (this.#failure !== null && !freshSink) return null;
    this.close();
    // A broken path may have failed the last flush too: the result then comes from the
    // fresh sink (the published state and the notice), not from what was published.
    return freshSink && sink ? sink.snapshot() : durable.state;
  }

  /** Lets go of both for good (the invocation settled). */
  close(): void {
    this.#durable?.dispose();
    this.#durable = null;
    this.#sink = null;
  }
}
