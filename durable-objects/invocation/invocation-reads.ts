/**
 * What the invocation reads back: its state (the durable state while running, the
 * settled result's after), its view, its progress (a few numbers and a line), and
 * `result(waitMs)`, which waits for the settle.
 */

import { latestLine, type ToolOutputState } from "../../src/core/output/index.ts";
import {
  type InvocationView,
  type Outcome,
  ok,
  type ProgressPoll,
  type ProgressRead,
  type ResultPoll,
} from "../../src/protocol/index.ts";
import { viewOf } from "./fanout/views.ts";
import { notFound } from "./outcome.ts";
import type { InvocationOutput } from "./output/invocation-output.ts";
import type { StoredInvocation } from "./output/stored-invocation.ts";
import { stateOf } from "./settled-result.ts";
import { WaitList } from "./wait-list.ts";

/** Longest `result(waitMs)` waits; longer requests are cut to this. */
const MAX_RESULT_WAIT_MS = 30_000;

/**
 * @example
 * const reads = new InvocationReads(stored, output);
 * await reads.result(5_000); // ok({ status: "running" }) unless it settles within 5 s
 */
export class InvocationReads {
  readonly #stored: StoredInvocation;
  readonly #output: InvocationOutput;
  readonly #settled = new WaitList();

  constructor(stored: StoredInvocation, output: InvocationOutput) {
    this.#stored = stored;
    this.#output = output;
  }

  /** Settled → the result; otherwise waits up to `waitMs` (at most 30 s) for it. */
  async result(waitMs: number): Promise<Outcome<ResultPoll>> {
    if (!this.#stored.record) return notFound();
    if (this.#stored.record.status !== "settled")
      await this.#settled.wait(waitMs, MAX_RESULT_WAIT_MS);
    const result = this.#stored.result();
    return ok(result ? { status: "settled", result } : { status: "running" });
  }

  /** The settle happened: every waiting `result` answers now. */
  settled(): void {
    this.#settled.wakeAll();
  }

  /** What subscribers have folded: the durable state, or the settled result's. */
  state(): ToolOutputState {
    const result = this.#stored.result();
    if (result) return stateOf(result);
    const durable = this.#output.durable;
    if (!durable) throw new Error("Running invocation without durable output.");
    return durable.state;
  }

  /** The view of the invocation, or `not_found`. */
  view(): Outcome<InvocationView> {
    return this.#stored.record ? ok(this.current()) : notFound();
  }

  /**
   * What MCP reads every second: like `result(waitMs)`, but a running invocation answers
   * its output totals and latest line, and a settled one whether it was cancelled too.
   */
  async progress(waitMs: number): Promise<Outcome<ProgressPoll>> {
    if (!this.#stored.record) return notFound();
    if (this.#stored.record.status !== "settled")
      await this.#settled.wait(waitMs, MAX_RESULT_WAIT_MS);
    const result = this.#stored.result();
    if (result)
      return ok({ status: "settled", result, cancelled: this.#stored.required().cancelled });
    return ok({ status: "running", ...this.#progressRead() });
  }

  #progressRead(): ProgressRead {
    const { truncation, content } = this.state();
    const first = content[0];
    return {
      bytes: truncation.totalBytes,
      lines: truncation.totalLines,
      lastLine: latestLine(first?.type === "text" ? first.text : ""),
    };
  }

  /** The view of an invocation known to exist. */
  current(): InvocationView {
    return viewOf(this.#stored.required(), this.state());
  }
}
