/**
 * The producer's path (the `external` tool, `POST /v1/invocations/:id/output`): a body's
 * `seq` checked (producer-sequence.ts), its calls checked and applied all or none
 * (producer.ts), and, for a sequenced body, its batch, its settle rows when it ends the
 * call, and its `seq` written in one transaction, so a retry after a crash is exact.
 */

import type { ToolOutputSink } from "../../src/core/output/index.ts";
import {
  type InvocationView,
  type Outcome,
  ok,
  type ProducerCall,
  type ProducerEnd,
} from "../../src/protocol/index.ts";
import { notFound } from "./outcome.ts";
import type { InvocationRecord } from "./output/store.ts";
import { applyCall, checkCalls, endingOf, refuseOutput } from "./producer.ts";
import { bodyDigest, ProducerSequence } from "./producer-sequence.ts";
import type { Ending } from "./settle-table.ts";

/** What the path needs of the invocation it writes to (the lifecycle). */
interface ProducedInvocation {
  record(): InvocationRecord | undefined;
  /** The sink, created from the durable state when none is attached. */
  liveSink(): ToolOutputSink;
  /** Appends a `write` call's text to the call's Durable Stream (stream/stream-log.ts). */
  appendStream(text: string): void;
  /** Publishes pending output now (a batch row and the subscribers' update). */
  flushNow(): void;
  settle(ending: Ending): Promise<void>;
  extendIdle(): Promise<void>;
  view(): InvocationView;
}

/**
 * @example
 * const producer = new ProducerPath(ctx.storage, lifecycleParts);
 * await producer.produce([{ write: "a" }], undefined, 0); // ok(view)
 */
export class ProducerPath {
  readonly #storage: DurableObjectStorage;
  /** The producer's accepted `seq` (producer-sequence.ts, docs/decisions/110). */
  readonly #sequence: ProducerSequence;
  readonly #invocation: ProducedInvocation;

  constructor(storage: DurableObjectStorage, invocation: ProducedInvocation) {
    this.#storage = storage;
    this.#sequence = new ProducerSequence(storage.sql);
    this.#invocation = invocation;
  }

  /** Applies every call or none, then ends the invocation when `end` is given. */
  async produce(
    calls: ProducerCall[],
    end?: ProducerEnd,
    seq?: number,
  ): Promise<Outcome<InvocationView>> {
    const invocation = this.#invocation;
    const record = invocation.record();
    if (!record) return notFound<InvocationView>();
    const digest = seq === undefined ? null : await bodyDigest(calls, end);
    // From here to the stored seq nothing awaits, so no other call can come between.
    const sequence =
      seq === undefined || digest === null ? null : this.#sequence.check(seq, digest);
    if (sequence?.kind === "retry") return ok(sequence.answer);
    if (sequence?.kind === "refused") return { ok: false, error: sequence.error };
    const refused = refuseOutput(record);
    if (refused) return refused;
    const sink = invocation.liveSink();
    const problem = checkCalls(calls, sink.snapshot());
    if (problem) return { ok: false, error: problem };
    for (const call of calls) applyCall(sink, call);
    // The stream is every byte written, never cut by the view's window (decision 200).
    const written = calls.map((call) => ("write" in call ? call.write : "")).join("");
    if (written !== "") invocation.appendStream(written);
    const finish = () => (end ? invocation.settle(endingOf(end)) : invocation.extendIdle());
    if (seq === undefined || digest === null) {
      await finish();
      return ok(invocation.view());
    }
    // A sequenced body is published at once: its batch (and the settle rows when it ends
    // the call) and its seq are one transaction, so a retry after a crash is exact.
    const finishing = this.#storage.transactionSync(() => {
      invocation.flushNow();
      const settling = finish();
      this.#sequence.accept(seq, digest, invocation.view());
      return settling;
    });
    await finishing;
    return ok(invocation.view());
  }
}
