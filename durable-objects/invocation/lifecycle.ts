import type { ToolOutput } from "../../src/core/output/index.ts";
import { admitCommand, probeSandbox } from "../../src/execenv/index.ts";
import {
  type HeldSize,
  INPUT_ECHO_WINDOW_MS,
  type InvocationView,
  markHeldSize,
  markLastInput,
  type Outcome,
  ok,
  refusal,
  type StartRequest,
  type TypedInput,
  workerConfig,
} from "../../src/protocol/index.ts";
import { getTool, type ToolContext } from "../../src/tools/index.ts";

import { noteProgress, noteSettled, noteStarted } from "../run/run-notes.ts";
import { AlarmSchedule, subjectOf } from "./alarm-schedule.ts";
import { sandboxTokenHolds } from "./fanout/sandbox-credential.ts";
import type { Subscribers } from "./fanout/subscribers.ts";
import { startEventOf } from "./fanout/views.ts";
import { InvocationReads } from "./invocation-reads.ts";
import { notFound } from "./outcome.ts";
import type { DurableOutput } from "./output/durable-output.ts";
import { InvocationOutput } from "./output/invocation-output.ts";
import type { InvocationRecord } from "./output/store.ts";
import type { StoredInvocation } from "./output/stored-invocation.ts";
import { ProducerPath } from "./producer-path.ts";
import { replayAllowed, replayRefused } from "./replay-guard.ts";
import { type Ending, settlementOf } from "./settle-table.ts";
import { resultOf } from "./settled-result.ts";
import type { StreamLog } from "./stream/stream-log.ts";
import {
  type Execution,
  executionOf,
  killAndDrain,
  type MemoMoment,
  policyOf,
  type RunEnd,
  type RunHandle,
  recordPolicy,
  restartOf,
  resumption,
  ToolRuns,
  toolContext,
  toolToStart,
} from "./tool-runs.ts";

/** How long an input waits for its echo to be published with it before it goes alone. */
const INPUT_MARK_MS = 250;

/** Where a subclass of the Durable Object may look in (the crash tests, docs/decisions/093). */
interface LifecycleSeams {
  memoMoment: MemoMoment;
  beforeFlush(): void;
  recovered(batches: number): void;
}

export class InvocationLifecycle {
  readonly #ctx: DurableObjectState;
  readonly #env: Env;
  readonly #seams: LifecycleSeams;
  readonly #stored: StoredInvocation;
  readonly #subscribers: Subscribers;
  readonly #alarms: AlarmSchedule;
  /** The call's Durable Stream: an external call's writes appended, readers woken at the settle. */
  readonly #stream: StreamLog;
  /** The producer API of the `external` tool (producer-path.ts). */
  readonly producer: ProducerPath;
  readonly #runs = new ToolRuns();
  /** An input to name in the details with the next publication (noteInput). */
  #pendingInput: TypedInput | null = null;
  #inputTimer: ReturnType<typeof setTimeout> | undefined;
  /** A cancel reading the work's last output before it settles (this instance only). */
  #cancelling: Promise<void> | null = null;
  readonly #output: InvocationOutput;
  /** State, view and `result(waitMs)` (invocation-reads.ts). */
  readonly reads: InvocationReads;

  /** Synchronous SQL only, so the object is whole before any event is delivered. */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    parts: { stored: StoredInvocation; subscribers: Subscribers; stream: StreamLog },
    seams: LifecycleSeams,
  ) {
    this.#ctx = ctx;
    this.#env = env;
    this.#seams = seams;
    this.#stored = parts.stored;
    this.#subscribers = parts.subscribers;
    this.#stream = parts.stream;
    this.#alarms = new AlarmSchedule(ctx.storage, env);
    this.producer = new ProducerPath(ctx.storage, {
      record: () => this.#stored.record,
      liveSink: () => this.#output.live(getTool(this.#stored.required().tool)?.output),
      appendStream: (text) => this.#stream.append([new TextEncoder().encode(text)]),
      flushNow: () => this.#output.durable?.flushNow(),
      settle: (ending) => this.#settle(ending),
      extendIdle: () => this.#alarms.extendIdle(),
      view: () => this.reads.current(),
    });
    this.#output = new InvocationOutput({
      ...{ storage: ctx.storage, log: this.#stored.log, store: this.#stored.store },
      subscribers: this.#subscribers,
      beforeFlush: () => {
        this.#markInput();
        seams.beforeFlush();
      },
      onFailure: (error) => this.#publicationFailed(error),
    });
    this.reads = new InvocationReads(this.#stored, this.#output);
    this.#load();
  }

  // ── start ─────────────────────────────────────────────────────────────────────

  /** Creates the invocation and starts its tool, or returns the existing one. */
  async start(req: StartRequest): Promise<Outcome<{ created: boolean; view: InvocationView }>> {
    if (this.#stored.record) return ok({ created: false, view: this.reads.current() });
    const tool = toolToStart(req);
    if (!tool.ok) return tool;
    const { def, params } = tool.value;
    if (def.sandbox) {
      // Nothing is written unless the host answers: an unreachable sandbox is a 502 and
      // the same toolCallId can be retried. Other events wait (at most the probe timeout),
      // so a concurrent start of this id cannot create the invocation twice. A created
      // sandbox's host answered the Worker a moment ago, with its load: not asked again
      // (decision 258).
      const probe = req.hostLoad
        ? ok(req.hostLoad)
        : await this.#ctx.blockConcurrencyWhile(() => probeSandbox(this.#env, req.sandbox));
      if (this.#stored.record) return ok({ created: false, view: this.reads.current() });
      if (!probe.ok) return probe;
      // A command waits its turn in its sandbox; past the line's bound it is refused now,
      // never accepted and failed later (decision 248).
      if (def.stretch) {
        const room = admitCommand(req.sandbox, probe.value);
        if (!room.ok) return room;
      }
    }
    const record = this.#stored.create(req);
    const sink = this.#output.attach(policyOf(def, params), null);
    // The start base: every subscriber's first state and where a replay-safe tool resumes.
    this.#output.open(startEventOf(record), sink.snapshot(), 0, null).checkpoint();
    const execution = executionOf(def, params, false);
    if (execution) await this.#run(execution);
    else await this.#alarms.extendIdle();
    await noteStarted(this.#env, record, this.reads.state());
    return ok({ created: true, view: this.reads.current() });
  }

  // ── run ───────────────────────────────────────────────────────────────────────

  /** Runs tool code on the attached sink and keeps the object alive while it runs. */
  async #run(execution: Execution): Promise<void> {
    const sink = this.#output.sink;
    if (!sink) throw new Error("No sink attached to run the tool on.");
    this.#runs.start(
      execution,
      sink.output,
      (run) => this.#toolContext(run),
      (end) => this.#ended(end),
    );
    await this.#alarms.heartbeat();
  }

  /**
   * A run ended by itself. A parked stretch left its work running: what it read is made
   * durable and the alarm, due now, starts the next stretch; until then nothing is in
   * flight, so the object can be evicted and the next stretch runs in a new instance.
   */
  async #ended(end: RunEnd): Promise<void> {
    if (end.kind !== "parked") return this.#settle(end);
    this.#output.durable?.flushNow();
    await this.#alarms.resumeNow();
  }

  #toolContext(run: RunHandle | null): ToolContext {
    const memos = {
      getMemo: (name: string) => this.#stored.store.getMemo(name),
      checkpoint: (memo: Parameters<DurableOutput["checkpoint"]>[0]) =>
        this.#durable().checkpoint(memo),
    };
    return toolContext(this.#stored.required(), this.#env, memos, run, (name, moment) => {
      const verdict = this.#seams.memoMoment(name, moment);
      // Halted as a crash would leave it: nothing the tool writes afterwards is published.
      if (verdict === "halt") this.#output.durable?.dispose();
      return verdict;
    });
  }

  /**
   * The publication path threw: nothing more would reach storage or subscribers, so
   * the invocation must not keep running silently. It settles as an error outside the
   * publisher's call stack, its tool stopped, keeping what was published.
   */
  #publicationFailed(error: unknown): void {
    console.error(`invocation ${this.#stored.record?.toolCallId}: publication failed`, error);
    queueMicrotask(() => {
      this.#runs.stop(error);
      this.#settle({ kind: "unpublishable", error }).catch((failure: unknown) =>
        console.error(`invocation ${this.#stored.record?.toolCallId}: settle failed`, failure),
      );
    });
  }

  // ── input ─────────────────────────────────────────────────────────────────────

  /**
   * Names who typed into the running call's terminal last, in its details (decision 191).
   * It goes out with the publication that carries the echo of what was typed (marked just
   * before the flush), so a keystroke is one publication, not a mark that goes at once
   * and an echo that then waits out the pacing; without output it goes after
   * `INPUT_MARK_MS`.
   */
  noteInput(input: TypedInput): Outcome<null> {
    const record = this.#stored.record;
    if (!record) return notFound();
    if (record.status === "settled") {
      return refusal("conflict", "Invocation already settled; nothing can be typed into it.");
    }
    this.#pendingInput = input;
    this.#output.durable?.expedite(INPUT_ECHO_WINDOW_MS);
    clearTimeout(this.#inputTimer);
    this.#inputTimer = setTimeout(() => this.#markInput(), INPUT_MARK_MS);
    return ok(null);
  }

  /** Names the size a person holds the terminal at in its details, or removes it (decision 193). */
  noteSize(size: HeldSize | null): Outcome<null> {
    const record = this.#stored.record;
    if (!record) return notFound();
    if (record.status === "settled") {
      return refusal("conflict", "Invocation already settled; its terminal is gone.");
    }
    const sink = this.#output.sink;
    if (sink) markHeldSize(sink.output.details, size);
    return ok(null);
  }

  /** Writes the latest input into the details, if one waits. */
  #markInput(): void {
    const input = this.#pendingInput;
    const sink = this.#output.sink;
    if (!input || !sink) return;
    this.#pendingInput = null;
    clearTimeout(this.#inputTimer);
    markLastInput(sink.output.details, input);
  }

  // ── settle ────────────────────────────────────────────────────────────────────

  /** Aborts a running tool; the result keeps the partial output and says it was cancelled. */
  async cancel(): Promise<Outcome<InvocationView>> {
    const record = this.#stored.record;
    if (!record) return notFound();
    if (record.status === "settled")
      return refusal("conflict", "Invocation already settled; there is nothing to cancel.");
    if (this.#cancelling) {
      await this.#cancelling;
      return ok(this.reads.current());
    }
    const stopped = this.#runs.stop(new Error("cancelled"));
    const stretch = getTool(record.tool)?.stretch;
    if (stretch) {
      // The work's last output comes after the kill: read it to its end before settling,
      // through the aborted stretch, or (none running) by killing and rejoining it.
      this.#cancelling =
        stopped ?? killAndDrain(stretch, this.#toolContext(null), () => this.#rejoin(record));
      await this.#cancelling;
    }
    await this.#settle({ kind: "cancelled" });
    return ok(this.reads.current());
  }

  /**
   * The end of a run (settle-table.ts says what it makes of the result): the last output
   * published (forced), the settled result stored as one record, the batch log and memos
   * deleted, `tool_end` to every subscriber, and the retention alarm set.
   */
  async #settle(ending: Ending): Promise<void> {
    const record = this.#stored.record;
    const output = this.#output.durable;
    if (!record || record.status === "settled" || !output) return;
    // A tool that grew `details` past its bound completed with that error.
    const limit = this.#output.sink?.limitError;
    if (ending.kind === "completed" && limit) ending = { kind: "failed", error: limit };
    const settlement = settlementOf(ending);
    const final = this.#output.finish(settlement, recordPolicy(record));
    // This last publication broke: settle with what was published and say why.
    if (!final) return this.#settle({ kind: "unpublishable", error: this.#output.failure });
    const { isError, cancelled } = settlement;
    const result = resultOf(final, isError);
    const settledAt = Date.now();
    const marks = {
      isError,
      cancelled,
      settledAt,
      deleteAt: settledAt + workerConfig(this.#env).settledRetentionMs,
    };
    this.#stored.settle(result, marks);
    this.#subscribers.end(startEventOf(record), isError, this.#stored.log.lastSeq);
    this.reads.settled();
    this.#stream.wake();
    await noteSettled(this.#env, record, final, marks);
    await this.#alarms.retireAt(marks.deleteAt);
  }

  // ── the alarm: heartbeat, resume after a crash, idle deadline, retirement ─────

  /** Does what alarm-schedule.ts says is due; each kind is idempotent. */
  async alarm(): Promise<void> {
    const record = this.#stored.record;
    if (!record) return;
    // A cancel reading the work's last output counts as a live run: the alarm leaves it be.
    const due = this.#alarms.due(subjectOf(record, this.#runs.live || this.#cancelling !== null));
    if (due.kind === "wait") return this.#alarms.waitUntil(due.until);
    if (due.kind === "retire") return this.#stored.retire();
    // Every alarm of a running call (heartbeat, next stretch, idle check) tells its run the totals.
    const live = this.#output.durable;
    if (live) await noteProgress(this.#env, record, live.state);
    // A reader whose sandbox token was revoked, or whose sandbox ended, reads no further.
    await this.#subscribers.endRevoked((credential) => sandboxTokenHolds(this.#env, credential));
    if (due.kind === "heartbeat") return this.#alarms.heartbeat();
    if (due.kind === "endIdle") return this.#settle({ kind: "idle", timeoutMs: due.timeoutMs });
    // A cancel (or a run) that began while the totals were noted owns the work now: a
    // stretch started here would read the kill and settle the call as failed first.
    if (this.#cancelling !== null || this.#runs.live) return this.#alarms.heartbeat();
    await this.#resume(record);
  }

  /**
   * Running, but no run in this instance (a stretch parked, or the object restarted): a
   * stretched tool rejoins its work from what subscribers saw, a replay-safe tool
   * re-executes from its memo checkpoint, anything else settles with an interruption notice.
   */
  async #resume(record: InvocationRecord): Promise<void> {
    const restart = restartOf(record, this.#stored.log, () => this.reads.state());
    if (restart.kind === "settle") return this.#settle(restart.ending);
    // A stretched tool rejoins its work; any other runs again, once per checkpoint.
    const replay = !getTool(record.tool)?.stretch;
    if (replay && !(await replayAllowed(this.#ctx.storage, record.checkpointSeq))) {
      return this.#settle({ kind: "failed", error: replayRefused(record.tool) });
    }
    this.#output.attach(restart.plan.policy, restart.plan.seed);
    await this.#run(restart.plan.execution);
  }

  /** A stretched tool's work rejoined on a sink over what subscribers saw (a cancel's drain). */
  #rejoin(record: InvocationRecord): { execution: Execution; out: ToolOutput } | null {
    const plan = resumption(getTool(record.tool), record, this.#stored.log, () =>
      this.reads.state(),
    );
    if (!plan) return null;
    return { execution: plan.execution, out: this.#output.attach(plan.policy, plan.seed).output };
  }

  // ── internals ────────────────────────────────────────────────────────────────

  /** Forces a publication of pending output now (tests and benchmarks). */
  flushOutput(): void {
    this.#output.durable?.flushNow();
  }

  /**
   * Loads the record and, while running, rebuilds the durable output from the log. A new
   * instance holding a running tool has no run of it (a crash, a restart or a parked
   * stretch): its resume is due now, not at the next heartbeat, so whoever woke the
   * object (write_stdin, a watcher) sees the work go on at once.
   */
  #load(): void {
    const record = this.#stored.record;
    if (record?.status !== "running") return;
    this.#seams.recovered(this.#output.recover(startEventOf(record), record));
    const subject = subjectOf(record, false);
    if (subject.status === "running" && !subject.external) void this.#alarms.resumeNow();
  }

  #durable(): DurableOutput {
    const durable = this.#output.durable;
    if (!durable) throw new Error("Running invocation without durable output.");
    return durable;
  }
}
