/**
 * The Invocation Durable Object: one per tool call, named by its `toolCallId`.
 *
 * The life of an invocation, in the order of this file:
 * start → run → publish → persist → settle → retire.
 * Mechanisms live elsewhere: the sink and tracker (src/output), pacing (src/publish),
 * the durable publication path (durable-output.ts), storage (schema.ts, batch-log.ts,
 * store.ts), recovery (recovery.ts) and fan-out (subscribers.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { encoder } from "../src/chord/index.ts";
import type { ToolStartEvent } from "../src/events/types.ts";
import {
  DEFAULT_OUTPUT_POLICY,
  type OutputPolicy,
  type SettledResult,
  ToolOutputSink,
  type ToolOutputState,
} from "../src/output/index.ts";
import { type BashStretch, killBash, runBashStretch } from "../src/tools/bash.ts";
import { EXTERNAL_TOOL, getTool } from "../src/tools/index.ts";
import type { ToolContext } from "../src/tools/types.ts";
import { probeSandbox } from "../src/worker/sandboxes.ts";
import { BatchLog } from "./batch-log.ts";
import { DurableOutput } from "./durable-output.ts";
import { idleNotice, idleTimeoutMs } from "./idle-timeout.ts";
import { PING_MESSAGE, PONG_MESSAGE, sseKeepAliveMs } from "./keep-alive.ts";
import { fail, messageOf, notFound, ok } from "./outcome.ts";
import { applyCall, checkCalls } from "./producer.ts";
import type {
  InvocationApi,
  InvocationView,
  Outcome,
  ProducerCall,
  ProducerEnd,
  ResultPoll,
  StartRequest,
} from "./protocol.ts";
import { readCheckpoint, recoverOutput } from "./recovery.ts";
import { migrate } from "./schema.ts";
import { resultOf, stateOf } from "./settled-result.ts";
import { type InvocationRecord, InvocationStore } from "./store.ts";
import { closeSocket, Subscribers } from "./subscribers.ts";

/** Keep-alive alarm spacing while a tool runs (docs/decisions/041). */
export const HEARTBEAT_MS = 15_000;
/** Longest `result(waitMs)` waits; longer requests are cut to this. */
export const MAX_RESULT_WAIT_MS = 30_000;
/** Default days a settled invocation is kept (`SETTLED_RETENTION_DAYS`). */
export const DEFAULT_RETENTION_DAYS = 7;

const DAY_MS = 86_400_000;

export const CANCELLED_NOTICE =
  "[Cancelled: the call was stopped before it finished; the output above is what it wrote until then.]";
/** Ends the output of an invocation whose publication path threw (docs/decisions/006). */
export function unpublishableNotice(error: unknown): string {
  return `[Output failed: publishing it threw "${messageOf(error)}", so the call was ended; the output above is what was published before that.]`;
}
export const INTERRUPTED_NOTICE =
  "[Interrupted: the call was cut off by a restart and is not safe to run again; the output above is what it wrote before the restart.]";

/** Stretches a cancel between stretches reads at most before it settles (the kill's grace is 2 s). */
const CANCEL_DRAIN_STRETCHES = 5;

/** A tool execution live in this instance. */
interface Runner {
  abort: AbortController;
  /** Settles once the tool code has returned or thrown (after a cancel: read to its end). */
  done?: Promise<void>;
}

/**
 * One way to run a tool's code on a sink: `execute`, a re-execution after a restart, or
 * one stretch of a stretched tool (which may end `"parked"`: to be continued by the alarm).
 */
type Execution = (
  signal: AbortSignal,
  out: ToolOutputSink["output"],
  context: ToolContext,
) => Promise<unknown>;

/** How a run ended; decides the notice, `isError` and `cancelled` of the result. */
type Ending =
  | { kind: "completed" }
  /** The tool threw (or the producer ended with an error text): the text is appended. */
  | { kind: "failed"; error: unknown }
  /** The producer ended with `isError` and no text. */
  | { kind: "failedQuietly" }
  | { kind: "cancelled" }
  | { kind: "interrupted" }
  /** An `external` invocation whose producer sent nothing for the idle timeout. */
  | { kind: "idle"; timeoutMs: number }
  /** Publishing the output threw (the sink could not flush, storage refused the batch). */
  | { kind: "unpublishable"; error: unknown };

/**
 * Tools whose work runs outside the Durable Object and that the DO follows in bounded
 * stretches (docs/decisions/046): a stretch reads for a while and parks, the alarm
 * starts the next one, which rejoins; after eviction or a restart the next stretch
 * rejoins the same way. `kill` stops the work while no stretch runs (a cancel).
 */
interface StretchedTool {
  run(
    toolCallId: string,
    params: unknown,
    signal: AbortSignal,
    out: ToolOutputSink["output"],
    context: ToolContext,
    reattach: boolean,
  ): Promise<BashStretch>;
  kill(toolCallId: string, context: ToolContext): Promise<void>;
}

const STRETCHED: Record<string, StretchedTool> = {
  bash: { run: runBashStretch as StretchedTool["run"], kill: killBash },
};

/** Tools that run on a sandbox host: their call is created only if the host answers. */
const SANDBOX_TOOLS: ReadonlySet<string> = new Set(["bash", "read", "grep", "glob"]);

export class InvocationDO extends DurableObject<Env> implements InvocationApi {
  readonly #store: InvocationStore;
  readonly #log: BatchLog;
  readonly #subscribers: Subscribers;
  #record: InvocationRecord | undefined;
  #result: SettledResult | undefined;
  /** The durable output while running (recovered after a restart). */
  #output: DurableOutput | null = null;
  /** The sink tools write to; created on demand, seeded from durable state. */
  #sink: ToolOutputSink | null = null;
  #runner: Runner | null = null;
  /** A cancel reading the work's last output before it settles; the alarm leaves it alone. */
  #cancelling: Promise<void> | null = null;
  readonly #settleWaiters = new Set<() => void>();
  /** When an `external` invocation times out unless the producer calls again (this instance only). */
  #idleDeadline: number | null = null;
  /** What the last recovery in this instance decoded (read by tests). */
  readonly recovery = { batches: 0 };
  /**
   * Tests only: called by `context.setMemo` just before and just after it writes the memo
   * and its checkpoint. Returning `"halt"` stops the run at that point as a crash would
   * (see `#halt`), so a test can crash the object exactly between a memo and the next
   * write, or just before a memo. Lives in memory: a new instance has none.
   */
  memoHook: ((name: string, moment: "before" | "after") => "halt" | undefined) | null = null;
  /**
   * Tests only: called before every flush of the sink; a throw stands for a flush that
   * fails, which no input can cause since the depth cap (docs/decisions/006).
   */
  flushHook: (() => void) | null = null;
  /** The first error the publication path threw; the invocation then settles with it. */
  #publishError: unknown = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Synchronous SQL only: the constructor finishes before any event is delivered, so
    // nothing can observe a half-loaded object (no blockConcurrencyWhile needed).
    migrate(ctx.storage);
    this.#store = new InvocationStore(ctx.storage.sql);
    this.#log = new BatchLog(ctx.storage.sql);
    this.#subscribers = new Subscribers(ctx, encoder, { sseKeepAliveMs: sseKeepAliveMs(env) });
    // Pings are answered by the runtime, so a client's keep-alive never wakes a
    // hibernated object (docs/decisions/071).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_MESSAGE, PONG_MESSAGE));
    this.#load();
  }

  // ── start ─────────────────────────────────────────────────────────────────────

  /** Creates the invocation and starts its tool, or returns the existing one. */
  async start(req: StartRequest): Promise<Outcome<{ created: boolean; view: InvocationView }>> {
    if (this.#record) return ok({ created: false, view: this.#view() });
    const def = getTool(req.tool);
    if (!def)
      return fail("bad_request", `Unknown tool "${req.tool}". GET /v1/tools lists the tools.`);
    let params: unknown;
    try {
      params = def.parse(req.args);
    } catch (error) {
      return fail("bad_request", messageOf(error));
    }
    if (SANDBOX_TOOLS.has(def.name)) {
      // Nothing is written unless the host answers: an unreachable sandbox is a 502 and
      // the same toolCallId can be retried. Other events wait (at most the probe timeout),
      // so a concurrent start of this id cannot create the invocation twice.
      const probe = await this.ctx.blockConcurrencyWhile(() => probeSandbox(this.env, req.sandbox));
      if (this.#record) return ok({ created: false, view: this.#view() });
      if (!probe.ok) return probe;
    }
    const record: InvocationRecord = {
      toolCallId: req.toolCallId,
      tool: req.tool,
      args: req.args,
      runId: req.runId,
      turnId: req.turnId,
      sandbox: req.sandbox,
      status: "running",
      isError: false,
      cancelled: false,
      createdAt: Date.now(),
      settledAt: null,
      deleteAt: null,
      checkpointSeq: null,
    };
    this.#store.insertRecord(record);
    this.#record = record;
    const sink = this.#attachSink(def.output, null);
    const output = this.#openOutput(sink.snapshot(), 0, null);
    // The start base: every subscriber's first state and where a replay-safe tool resumes.
    output.checkpoint();
    const stretched = STRETCHED[def.name];
    if (stretched) {
      this.#run((signal, out, context) =>
        stretched.run(req.toolCallId, params, signal, out, context, false),
      );
      await this.#heartbeat();
    } else if (def.name !== EXTERNAL_TOOL) {
      this.#run((signal, out, context) =>
        def.execute(req.toolCallId, params, signal, out, context),
      );
      await this.#heartbeat();
    } else {
      await this.#armIdleTimeout();
    }
    return ok({ created: true, view: this.#view() });
  }

  // ── run ───────────────────────────────────────────────────────────────────────

  /**
   * Runs tool code on the attached sink with a fresh abort signal and settles when it
   * returns or throws, unless it was cancelled or settled meanwhile.
   */
  #run(execution: Execution): void {
    const sink = this.#sink;
    if (!sink) throw new Error("No sink attached to run the tool on.");
    const runner: Runner = { abort: new AbortController() };
    this.#runner = runner;
    const context = this.#toolContext(runner);
    // Async wrapper: a tool that throws synchronously fails like one that rejects.
    runner.done = (async () => execution(runner.abort.signal, sink.output, context))()
      .then(
        (stretch) =>
          stretch === "parked" ? this.#park(runner) : this.#finish(runner, { kind: "completed" }),
        (error: unknown) => this.#finish(runner, { kind: "failed", error }),
      )
      .catch(() => {});
  }

  /** What tool code gets besides its sink; `setMemo` refuses once `runner` is no longer current. */
  #toolContext(runner: Runner | null): ToolContext {
    const record = this.#required();
    return {
      toolCallId: record.toolCallId,
      runId: record.runId,
      turnId: record.turnId,
      sandbox: record.sandbox,
      env: this.env,
      getMemo: (name) => this.#store.getMemo(name),
      setMemo: (name, value) => {
        if (this.#runner !== runner || !this.#output) {
          throw new Error(
            "setMemo after the invocation ended (cancelled or settled); the memo was not written.",
          );
        }
        if (this.memoHook?.(name, "before") === "halt") {
          this.#halt(runner);
          throw new Error(
            `Run halted by memoHook before memo "${name}"; the memo was not written.`,
          );
        }
        this.#output.checkpoint({ name, value });
        if (this.memoHook?.(name, "after") === "halt") this.#halt(runner);
      },
    };
  }

  /**
   * Leaves the run as a crash at this point would (for `memoHook`): the tool's signal
   * aborts, its ending is ignored, and nothing it writes afterwards is published or stored.
   */
  #halt(runner: Runner | null): void {
    if (this.#runner === runner) this.#runner = null;
    this.#output?.dispose();
    runner?.abort.abort(new Error("halted by memoHook"));
  }

  /**
   * A stretch ended with its work still running: everything it read is made durable and
   * the alarm, due now, starts the next stretch. Until then nothing is in flight, so the
   * object can be evicted; the next stretch then runs in the new instance.
   */
  async #park(runner: Runner): Promise<void> {
    if (this.#runner !== runner) return; // cancelled or settled meanwhile
    this.#runner = null;
    this.#output?.flushNow();
    await this.ctx.storage.setAlarm(Date.now());
  }

  async #finish(runner: Runner, ending: Ending): Promise<void> {
    if (this.#runner !== runner) return; // cancelled or settled meanwhile
    this.#runner = null;
    await this.#settle(ending);
  }

  /** Keeps the object alive while a tool runs, and lets the alarm notice a crash. */
  async #heartbeat(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
  }

  /** Moves an `external` invocation's deadline to one idle timeout from now. */
  async #armIdleTimeout(): Promise<void> {
    this.#idleDeadline = Date.now() + idleTimeoutMs(this.env);
    await this.ctx.storage.setAlarm(this.#idleDeadline);
  }

  // ── publish & persist ─────────────────────────────────────────────────────────

  #openOutput(
    state: ToolOutputState,
    deltasSinceBase: number,
    checkpointSeq: number | null,
  ): DurableOutput {
    const output = new DurableOutput({
      storage: this.ctx.storage,
      log: this.#log,
      store: this.#store,
      subscribers: this.#subscribers,
      start: this.#startEvent(),
      state,
      deltasSinceBase,
      checkpointSeq,
      flush: () => {
        this.flushHook?.();
        return this.#sink?.flush() ?? [];
      },
      onError: (error) => this.#publicationFailed(error),
    });
    this.#output = output;
    return output;
  }

  /**
   * The publication path threw: nothing more would reach storage or subscribers, so
   * the invocation must not keep running silently. It settles as an error outside the
   * publisher's call stack, its tool stopped, keeping what was published.
   */
  #publicationFailed(error: unknown): void {
    console.error(`invocation ${this.#record?.toolCallId}: publication failed`, error);
    if (this.#publishError !== null) return;
    this.#publishError = error;
    queueMicrotask(() => {
      const runner = this.#runner;
      this.#runner = null;
      runner?.abort.abort(error);
      this.#settle({ kind: "unpublishable", error }).catch((failure: unknown) =>
        console.error(`invocation ${this.#record?.toolCallId}: settle failed`, failure),
      );
    });
  }

  /** A sink over `seed` (or the initial state); its first flush is a base of it. */
  #attachSink(policy: OutputPolicy, seed: ToolOutputState | null): ToolOutputSink {
    const sink = new ToolOutputSink({ policy, onChange: () => this.#output?.markDirty() });
    if (seed) sink.seed(seed);
    this.#sink = sink;
    return sink;
  }

  /** The sink, created from the durable state when none is attached (after a restart). */
  #liveSink(): ToolOutputSink {
    if (this.#sink) return this.#sink;
    const policy = getTool(this.#required().tool)?.output ?? DEFAULT_OUTPUT_POLICY;
    return this.#attachSink(policy, this.#output?.state ?? null);
  }

  /** Forces a publication of pending output now (tests and benchmarks). */
  flushOutput(): void {
    this.#output?.flushNow();
  }

  // ── producer API (the `external` tool) ───────────────────────────────────────

  /** Applies every call or none, then ends the invocation when `end` is given. */
  async produce(calls: ProducerCall[], end?: ProducerEnd): Promise<Outcome<InvocationView>> {
    const record = this.#record;
    if (!record) return notFound();
    if (record.tool !== EXTERNAL_TOOL) {
      return fail(
        "conflict",
        `Invocation runs tool "${record.tool}"; only "external" invocations accept output.`,
      );
    }
    if (record.status === "settled")
      return fail("conflict", "Invocation already ended; no more output is accepted.");
    const sink = this.#liveSink();
    const problem = checkCalls(calls, sink.snapshot());
    if (problem) return { ok: false, error: problem };
    for (const call of calls) applyCall(sink, call);
    if (!end) await this.#armIdleTimeout();
    else if (!end.isError) await this.#settle({ kind: "completed" });
    else if (end.error) await this.#settle({ kind: "failed", error: end.error });
    else await this.#settle({ kind: "failedQuietly" });
    return ok(this.#view());
  }

  // ── settle ────────────────────────────────────────────────────────────────────

  /** Aborts a running tool; the result keeps the partial output and says it was cancelled. */
  async cancel(): Promise<Outcome<InvocationView>> {
    const record = this.#record;
    if (!record) return notFound();
    if (record.status === "settled")
      return fail("conflict", "Invocation already settled; there is nothing to cancel.");
    if (this.#cancelling) {
      await this.#cancelling;
      return ok(this.#view());
    }
    const runner = this.#runner;
    this.#runner = null;
    runner?.abort.abort(new Error("cancelled"));
    const stretched = STRETCHED[record.tool];
    if (stretched) {
      // The work's last output comes after the kill: read it to the end before settling.
      this.#cancelling = runner?.done ?? this.#killAndDrain(record, stretched);
      await this.#cancelling;
    }
    await this.#settle({ kind: "cancelled" });
    return ok(this.#view());
  }

  /**
   * A cancel between stretches (or after a restart): nothing reads the work, so it is
   * stopped directly and then rejoined, a few stretches at most, until it has exited,
   * so that what it printed up to the kill is in the output.
   */
  async #killAndDrain(record: InvocationRecord, stretched: StretchedTool): Promise<void> {
    const context = this.#toolContext(null);
    try {
      await stretched.kill(record.toolCallId, context);
      const execution = this.#prepareResume(record);
      const out = this.#sink?.output;
      if (!execution || !out) return;
      for (let i = 0; i < CANCEL_DRAIN_STRETCHES; i++) {
        if ((await execution(new AbortController().signal, out, context)) !== "parked") return;
      }
    } catch (error) {
      // The command failed as killed (expected), or the host is gone: settle with what is here.
      if (!/killed on request/.test(messageOf(error))) {
        console.error(`invocation ${record.toolCallId}: reading after cancel failed`, error);
      }
    }
  }

  /**
   * The end of a run: the last output published (forced), the settled result stored
   * as one record, the batch log and memos deleted, `tool_end` to every subscriber,
   * and the retention alarm set.
   */
  async #settle(ending: Ending): Promise<void> {
    const record = this.#record;
    const output = this.#output;
    if (!record || record.status === "settled" || !output) return;
    // A tool that grew `details` past its bound completed with that error.
    const limit = this.#sink?.limitError;
    if (ending.kind === "completed" && limit) ending = { kind: "failed", error: limit };
    if (ending.kind === "unpublishable") {
      // The broken sink is dropped; a fresh one over the published state carries the notice.
      this.#attachSink(this.#liveSink().policy, output.state).fail(
        unpublishableNotice(ending.error),
      );
    }
    if (ending.kind === "failed") this.#liveSink().fail(ending.error);
    if (ending.kind === "cancelled") this.#liveSink().appendNotice(CANCELLED_NOTICE);
    if (ending.kind === "interrupted") this.#liveSink().appendNotice(INTERRUPTED_NOTICE);
    if (ending.kind === "idle") this.#liveSink().appendNotice(idleNotice(ending.timeoutMs));
    output.flushNow();
    if (this.#publishError !== null && ending.kind !== "unpublishable") {
      // This last flush broke: settle with what was published and say why.
      return this.#settle({ kind: "unpublishable", error: this.#publishError });
    }
    output.dispose();
    const isError = ending.kind !== "completed";
    const cancelled = ending.kind === "cancelled";
    // A broken path may have failed the last flush too: the result then comes from the
    // fresh sink (the published state and the notice), not from what was published.
    const final = ending.kind === "unpublishable" ? this.#liveSink().snapshot() : output.state;
    const result = resultOf(final, isError);
    const settledAt = Date.now();
    const deleteAt = settledAt + this.#retentionDays() * DAY_MS;
    this.ctx.storage.transactionSync(() => {
      this.#store.writeResult(result);
      this.#store.markSettled({ isError, cancelled, settledAt, deleteAt });
      this.#log.clear();
      this.#store.clearMemos();
    });
    this.#record = {
      ...record,
      status: "settled",
      isError,
      cancelled,
      settledAt,
      deleteAt,
      checkpointSeq: null,
    };
    this.#result = result;
    this.#output = null;
    this.#sink = null;
    this.#idleDeadline = null;
    this.#subscribers.end(this.#startEvent(), isError, this.#log.lastSeq);
    for (const wake of this.#settleWaiters) wake();
    this.#settleWaiters.clear();
    await this.ctx.storage.setAlarm(deleteAt);
  }

  #retentionDays(): number {
    const days = Number(this.env.SETTLED_RETENTION_DAYS ?? DEFAULT_RETENTION_DAYS);
    return Number.isFinite(days) && days >= 0 ? days : DEFAULT_RETENTION_DAYS;
  }

  // ── alarms: heartbeat, recovery after a crash, retirement ────────────────────

  /**
   * Runs at least once per scheduled time (maybe more): every branch is idempotent.
   * Running with a live runner → next heartbeat. Running without one (a stretch parked,
   * or the object restarted) → resume: `bash` reattaches, a replay-safe tool re-executes from its
   * checkpoint, anything else settles with its output and an interruption notice.
   * `external` → its idle deadline: ended as an error once the producer went silent.
   * Settled → delete everything once the retention period is over.
   */
  override async alarm(): Promise<void> {
    const record = this.#record;
    if (!record) return;
    if (record.status === "settled") {
      const deleteAt = record.deleteAt ?? 0;
      if (Date.now() < deleteAt) return this.ctx.storage.setAlarm(deleteAt);
      await this.#retire();
      return;
    }
    if (this.#runner || this.#cancelling) return this.#heartbeat();
    if (record.tool === EXTERNAL_TOOL) return this.#endIfIdle();
    await this.#resume(record);
  }

  /**
   * The alarm of a running `external` invocation is its idle deadline. A deadline this
   * instance moved later (a producer call since) re-arms; after a restart the instance
   * knows no later call, so the alarm, which never fires before its time, is the deadline.
   */
  async #endIfIdle(): Promise<void> {
    const deadline = this.#idleDeadline;
    if (deadline !== null && Date.now() < deadline) {
      await this.ctx.storage.setAlarm(deadline);
      return;
    }
    await this.#settle({ kind: "idle", timeoutMs: idleTimeoutMs(this.env) });
  }

  async #resume(record: InvocationRecord): Promise<void> {
    let execution: Execution | null;
    try {
      execution = this.#prepareResume(record);
    } catch (error) {
      // Nothing to resume from (a tool renamed, args no longer valid): fail, output kept.
      await this.#settle({
        kind: "failed",
        error: `Could not resume after a restart: ${messageOf(error)}`,
      });
      return;
    }
    if (!execution) {
      await this.#settle({ kind: "interrupted" });
      return;
    }
    this.#run(execution);
    await this.#heartbeat();
  }

  /** Attaches a sink and returns how to continue the tool, or null if it cannot be. */
  #prepareResume(record: InvocationRecord): Execution | null {
    const def = getTool(record.tool);
    if (!def) throw new Error(`tool "${record.tool}" is no longer registered`);
    const params = def.parse(record.args);
    const stretched = STRETCHED[record.tool];
    if (stretched) {
      // Rejoin the process: continue from what subscribers saw; the source re-sends its view.
      this.#attachSink(def.output, this.#state());
      return (signal, out, context) =>
        stretched.run(record.toolCallId, params, signal, out, context, true);
    }
    if (def.replaySafe && record.checkpointSeq !== null) {
      // Re-execute from the last memo checkpoint: memoised output once, the rest redone.
      this.#attachSink(def.output, readCheckpoint(this.#log, record.checkpointSeq));
      return (signal, out, context) => def.execute(record.toolCallId, params, signal, out, context);
    }
    return null;
  }

  /** Deletes everything this object stored; it answers `not_found` afterwards. */
  async #retire(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    migrate(this.ctx.storage);
    this.#record = undefined;
    this.#result = undefined;
  }

  // ── reading: view, result, subscriptions ─────────────────────────────────────

  async view(): Promise<Outcome<InvocationView>> {
    return this.#record ? ok(this.#view()) : notFound();
  }

  /** Settled → the result; otherwise waits up to `waitMs` (at most 30 s) for it. */
  async result(waitMs: number): Promise<Outcome<ResultPoll>> {
    if (!this.#record) return notFound();
    if (this.#record.status !== "settled") {
      const wait = Math.min(Math.max(0, Number.isFinite(waitMs) ? waitMs : 0), MAX_RESULT_WAIT_MS);
      if (wait > 0) await this.#settled(wait);
    }
    const result = this.#settledResult();
    return ok(result ? { status: "settled", result } : { status: "running" });
  }

  #settled(waitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#settleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.#settleWaiters.add(done);
    });
  }

  /**
   * Subscriptions (the Worker checked the subscribe token): `/socket` upgrades to a
   * hibernatable WebSocket, `/events` opens an SSE stream. Either starts with
   * `tool_start` and a base `tool_update`; a settled invocation adds `tool_end`.
   */
  override async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path !== "/socket" && path !== "/events") return new Response("Not found", { status: 404 });
    if (!this.#record) return new Response("No such invocation", { status: 404 });
    const start = this.#startEvent();
    const state = this.#state();
    const ended = this.#record.status === "settled" ? { isError: this.#record.isError } : null;
    if (path === "/events")
      return this.#subscribers.openEventStream(start, state, this.#log.lastSeq, ended);
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected Upgrade: websocket", {
        status: 426,
        headers: { Upgrade: "websocket" },
      });
    }
    return this.#subscribers.acceptSocket(start, state, ended);
  }

  /**
   * A subscriber may send `{"type":"resync"}` to get a fresh base, at most once per
   * publication (docs/decisions/070); nothing else is read.
   */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (typeof message !== "string" || !this.#record) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if ((parsed as { type?: unknown } | null)?.type === "resync") {
      this.#subscribers.resync(ws, this.#startEvent(), this.#state());
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#subscribers.drop(ws);
    closeSocket(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#subscribers.drop(ws);
  }

  /** SSE queues: the fullest stream's unread bytes and how often a reader fell behind (tests). */
  sseStats(): { maxQueuedBytes: number; resets: number; streams: number } {
    return this.#subscribers.sseStats();
  }

  /** Storage use, for tests and benchmarks. */
  storageStats(): {
    batchBytes: number;
    batchRows: number;
    resultBytes: number;
    memos: number;
    bytesAppended: number;
  } {
    return {
      batchBytes: this.#log.storedBytes(),
      batchRows: this.#log.storedRows(),
      resultBytes: this.#store.resultBytes(),
      memos: this.#store.memoCount(),
      bytesAppended: this.#log.bytesAppended,
    };
  }

  // ── internals ────────────────────────────────────────────────────────────────

  /** Loads the record and, while running, rebuilds the durable output from the log. */
  #load(): void {
    this.#record = this.#store.record();
    if (this.#record?.status !== "running") return;
    const recovered = recoverOutput(this.#log);
    if (!recovered)
      throw new Error(
        `Invocation ${this.#record.toolCallId} is running but its batch log has no base.`,
      );
    this.recovery.batches = recovered.batches;
    this.#openOutput(recovered.state, recovered.deltasSinceBase, this.#record.checkpointSeq);
  }

  #required(): InvocationRecord {
    if (!this.#record) throw new Error("This object holds no invocation.");
    return this.#record;
  }

  #settledResult(): SettledResult | undefined {
    if (this.#record?.status !== "settled") return undefined;
    this.#result ??= this.#store.result();
    return this.#result;
  }

  /** What subscribers have folded: the durable state, or the settled result's. */
  #state(): ToolOutputState {
    const result = this.#settledResult();
    if (result) return stateOf(result);
    if (!this.#output) throw new Error("Running invocation without durable output.");
    return this.#output.state;
  }

  #view(): InvocationView {
    const r = this.#required();
    return {
      id: r.toolCallId,
      tool: r.tool,
      args: r.args,
      runId: r.runId,
      turnId: r.turnId,
      sandbox: r.sandbox,
      status: r.status,
      state: this.#state(),
      ...(r.status === "settled" ? { isError: r.isError, cancelled: r.cancelled } : {}),
      createdAt: r.createdAt,
      ...(r.settledAt !== null ? { settledAt: r.settledAt } : {}),
    };
  }

  #startEvent(): ToolStartEvent {
    const r = this.#required();
    return {
      type: "tool_start",
      runId: r.runId,
      turnId: r.turnId,
      toolCallId: r.toolCallId,
      toolName: r.tool,
      args: r.args,
    };
  }
}
