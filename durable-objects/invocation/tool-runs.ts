/**
 * Running tool code on the sink: one run at a time, each with its own abort signal. A
 * run that is stopped (cancelled, settled another way, halted) no longer counts: its
 * ending is ignored and its `setMemo` refuses.
 */
import type { JsonValue } from "../../src/core/chord/index.ts";
import type { OutputPolicy, ToolOutput, ToolOutputState } from "../../src/core/output/index.ts";
import { messageOf, type Outcome, ok, refusal } from "../../src/protocol/index.ts";
import { type AnyTool, getTool, type StretchEnd, type ToolContext } from "../../src/tools/index.ts";
import type { BatchLog } from "./output/batch-log.ts";
import { readCheckpoint } from "./output/recovery.ts";
import type { InvocationRecord } from "./output/store.ts";
import type { Ending } from "./settle-table.ts";

/**
 * One way to run a tool's code on the sink: `execute`, a re-execution after a restart, or
 * one stretch of a stretched tool (which may end `"parked"`: to be continued by the alarm).
 */
export type Execution = (run: {
  out: ToolOutput;
  signal: AbortSignal;
  context: ToolContext;
}) => Promise<StretchEnd | undefined>;

/** How a run ended, as its owner hears it: parked, or one of the endings that settle. */
export type RunEnd = { kind: "parked" } | Extract<Ending, { kind: "completed" | "failed" }>;

/** A run as its tool context sees it. */
export interface RunHandle {
  /** Whether this run is still the current one. */
  current(): boolean;
  /** Stops this run as a crash would: its signal aborts, its ending is ignored. */
  halt(reason: unknown): void;
}

/**
 * The current run, if any.
 * @example
 * runs.start(execution, sink.output, (run) => contextFor(run), (end) => settleOrPark(end));
 * runs.stop(new Error("cancelled")); // true if a run was current
 */
export class ToolRuns {
  #current: AbortController | null = null;
  /** Settles once the current run's code has returned or thrown. */
  #done: Promise<void> | null = null;

  /** Whether a run is current in this instance. */
  get live(): boolean {
    return this.#current !== null;
  }

  /**
   * Starts `execution` with a fresh abort signal; `onEnd` hears how it ended unless it was
   * stopped meanwhile. A tool that throws synchronously fails like one that rejects.
   */
  start(
    execution: Execution,
    out: ToolOutput,
    contextFor: (run: RunHandle) => ToolContext,
    onEnd: (end: RunEnd) => Promise<void>,
  ): void {
    const abort = new AbortController();
    this.#current = abort;
    const run: RunHandle = {
      current: () => this.#current === abort,
      halt: (reason) => {
        if (this.#current === abort) this.#current = null;
        abort.abort(reason);
      },
    };
    const context = contextFor(run);
    const ended = (end: RunEnd) => {
      if (this.#current !== abort) return; // stopped meanwhile
      this.#current = null;
      return onEnd(end);
    };
    const code = (async () => execution({ out, signal: abort.signal, context }))();
    this.#done = code.then(
      () => {},
      () => {},
    );
    code.then(
      (result) => ended(result === "parked" ? { kind: "parked" } : { kind: "completed" }),
      (error: unknown) => ended({ kind: "failed", error }),
    );
  }

  /**
   * Stops the current run (its signal aborts with `reason`). Returns a promise that
   * settles once the stopped run's code has returned (a stretch reads its work to the
   * end after an abort), or null when no run was current.
   */
  stop(reason: unknown): Promise<void> | null {
    const abort = this.#current;
    const done = this.#done;
    this.#current = null;
    this.#done = null;
    abort?.abort(reason);
    return abort !== null ? done : null;
  }
}

/** Where a tool context's memos go. */
interface MemoStore {
  getMemo(name: string): JsonValue | undefined;
  /** Writes the memo with an output checkpoint; throws when there is no output to checkpoint. */
  checkpoint(memo: { name: string; value: JsonValue }): void;
}

/** A memo moment a subclass may stop a run at (the crash tests, docs/decisions/049). */
export type MemoMoment = (name: string, moment: "before" | "after") => "halt" | undefined;

/**
 * What tool code gets besides its sink. `setMemo` refuses once `run` is no longer
 * current (or, with no run, between stretches), and stops at a `"halt"` moment.
 * @example toolContext(record, env, memos, run, () => undefined)
 */
export function toolContext(
  call: Pick<ToolContext, "toolCallId" | "runId" | "turnId" | "sandbox">,
  env: Env,
  memos: MemoStore,
  run: RunHandle | null,
  moment: MemoMoment,
): ToolContext {
  return {
    toolCallId: call.toolCallId,
    runId: call.runId,
    turnId: call.turnId,
    sandbox: call.sandbox,
    env,
    getMemo: (name) => memos.getMemo(name),
    setMemo: (name, value) => {
      if (!run?.current()) {
        throw new Error(
          "setMemo after the invocation ended (cancelled or settled); the memo was not written.",
        );
      }
      if (moment(name, "before") === "halt") {
        run.halt(new Error("halted before a memo"));
        throw new Error(`Run halted before memo "${name}"; the memo was not written.`);
      }
      memos.checkpoint({ name, value });
      if (moment(name, "after") === "halt") run.halt(new Error("halted after a memo"));
    },
  };
}

/**
 * The registered tool a start request names, with its params: those the Worker parsed
 * (`req.params`), or, from a caller that sent none, `args` parsed here, or a 400 that
 * says what is wrong.
 * @example toolToStart({ tool: "steps", args: { steps: 3 }, ...ids })
 */
export function toolToStart(
  req: Pick<InvocationRecord, "tool" | "args"> & { params?: unknown },
): Outcome<{ def: AnyTool; params: unknown }> {
  const def = getTool(req.tool);
  if (!def)
    return refusal("bad_request", `Unknown tool "${req.tool}". GET /v1/tools lists the tools.`);
  if ("params" in req) return ok({ def, params: req.params });
  try {
    return ok({ def, params: def.parse(req.args) });
  } catch (error) {
    return refusal("bad_request", messageOf(error));
  }
}

/**
 * How to run `def` with `params`: a stretch (`reattach` when resuming), its `execute`, or
 * null for the agent-side `external` tool, which the DO does not run.
 * @example executionOf(getTool("steps")!, { steps: 3 }, false)
 */
export function executionOf(def: AnyTool, params: unknown, reattach: boolean): Execution | null {
  const { stretch, execute } = def;
  if (stretch) return (run) => stretch.run({ ...run, params, reattach });
  if (execute) {
    return async (run) => {
      await execute({ ...run, params });
      return undefined;
    };
  }
  return null;
}

/**
 * How a running invocation continues in an instance that has no run (a stretch parked,
 * or the object restarted): a stretched tool rejoins its work from what subscribers saw
 * (`durableState`), a replay-safe tool re-executes from its memo checkpoint, anything
 * else cannot (null: it settles as interrupted). Throws when the tool or its args are
 * gone.
 * @example resumption(getTool(record.tool), record, log, () => output.state)
 */
export function resumption(
  def: AnyTool | undefined,
  record: InvocationRecord,
  log: BatchLog,
  durableState: () => ToolOutputState,
): { execution: Execution; policy: OutputPolicy; seed: ToolOutputState } | null {
  if (!def) throw new Error(`tool "${record.tool}" is no longer registered`);
  const params = def.parse(record.args);
  const checkpoint = def.replaySafe ? record.checkpointSeq : null;
  const seed = def.stretch
    ? durableState()
    : checkpoint !== null
      ? readCheckpoint(log, checkpoint)
      : null;
  const execution = seed ? executionOf(def, params, true) : null;
  return execution && seed ? { execution, policy: policyOf(def, params), seed } : null;
}

/**
 * The output policy of one call: chosen by its args for a tool with `outputFor` (bash's
 * windows), else the tool's own.
 * @example policyOf(getTool("bash")!, { command: "ls", head: 10 }) // { retain: "head", maxLines: 18, ... }
 */
export function policyOf(def: AnyTool, params: unknown): OutputPolicy {
  return def.outputFor ? def.outputFor(params) : def.output;
}

/** `policyOf` a stored call (its tool's own policy when the args no longer parse). */
export function recordPolicy(
  record: Pick<InvocationRecord, "tool" | "args">,
): OutputPolicy | undefined {
  const def = getTool(record.tool);
  if (!def?.outputFor) return def?.output;
  try {
    return def.outputFor(def.parse(record.args));
  } catch {
    return def.output;
  }
}

/** What an instance with no run does with a running invocation (`resumption`, or settle). */
type Restart =
  | { kind: "run"; plan: NonNullable<ReturnType<typeof resumption>> }
  | { kind: "settle"; ending: Extract<Ending, { kind: "failed" | "interrupted" }> };

/**
 * `resumption`, or the ending when there is none: interrupted, or failed when there is
 * nothing to resume from (a tool renamed, args no longer valid); the output is kept.
 * @example restartOf(record, log, () => output.state) // { kind: "run", plan }
 */
export function restartOf(
  record: InvocationRecord,
  log: BatchLog,
  durableState: () => ToolOutputState,
): Restart {
  try {
    const plan = resumption(getTool(record.tool), record, log, durableState);
    return plan ? { kind: "run", plan } : { kind: "settle", ending: { kind: "interrupted" } };
  } catch (error) {
    const failure = `Could not resume after a restart: ${messageOf(error)}`;
    return { kind: "settle", ending: { kind: "failed", error: failure } };
  }
}

/** Stretches a cancel between stretches reads at most before it settles (the kill's grace is 2 s). */
const CANCEL_DRAIN_STRETCHES = 5;

/**
 * A cancel between stretches (or after a restart): nothing reads the work, so it is
 * killed, then rejoined for a few stretches at most until it has exited, so that what it
 * printed up to the kill is in the output (docs/decisions/081 of the sandbox's cancel).
 * @example await killAndDrain(def.stretch, context, () => rejoin())
 */
export async function killAndDrain(
  stretch: NonNullable<AnyTool["stretch"]>,
  context: ToolContext,
  rejoin: () => { execution: Execution; out: ToolOutput } | null,
): Promise<void> {
  try {
    await stretch.kill(context);
    const plan = rejoin();
    if (!plan) return;
    const run = { out: plan.out, signal: new AbortController().signal, context };
    for (let i = 0; i < CANCEL_DRAIN_STRETCHES; i++) {
      if ((await plan.execution(run)) !== "parked") return;
    }
  } catch (error) {
    // The command failed as killed (expected), or the host is gone: settle with what is here.
    if (!/killed on request/.test(messageOf(error))) {
      console.error(`invocation ${context.toolCallId}: reading after cancel failed`, error);
    }
  }
}
