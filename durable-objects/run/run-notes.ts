/**
 * What an Invocation DO tells its run's Run DO (docs/decisions/122), and the one call
 * that tells it. A call joins a run index only when it was created with a `runId` of
 * its own (one that is not its `toolCallId`, the default), so single calls cost no
 * second object.
 */
import type { JsonValue } from "../../src/core/chord/types.ts";
import type { RunCall } from "../../src/core/events/run-call.ts";
import type { ToolOutputState } from "../../src/core/output/types.ts";
import type { RunApi, RunNote } from "../../src/protocol/index.ts";
import { isBackgroundCall, jobsIndexName } from "../../src/tools/jobs.ts";

export type { RunApi, RunCall, RunNote };

/** Longest args summary kept per call. */
const SUMMARY_CHARS = 160;

/** What an Invocation DO knows when it tells the run. */
interface RunMember {
  toolCallId: string;
  runId: string;
  turnId: string;
  tool: string;
  args: JsonValue;
  createdAt: number;
  /** The sandbox it runs in; a created one (`sbx_…`) is named in the row's summary. */
  sandbox?: string;
}

/** True when the call belongs to a run index (it was given a runId of its own). */
function inRunIndex(member: Pick<RunMember, "toolCallId" | "runId">): boolean {
  return member.runId !== member.toolCallId;
}

/**
 * One line for the args: bash's command, else compact JSON, cut at `SUMMARY_CHARS`.
 * @example summarizeArgs("bash", { command: "npm test" }) // "npm test"
 */
export function summarizeArgs(tool: string, args: JsonValue): string {
  const command =
    tool === "bash" && args && typeof args === "object" && !Array.isArray(args)
      ? args.command
      : undefined;
  const text = (typeof command === "string" ? command : (JSON.stringify(args) ?? "")).replace(
    /\s+/g,
    " ",
  );
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

/** The call's row as the run lists it. */
function runCall(
  member: RunMember,
  state: ToolOutputState,
  ending: { isError: boolean; cancelled: boolean; settledAt: number } | null,
): RunCall {
  return {
    toolCallId: member.toolCallId,
    turnId: member.turnId,
    tool: member.tool,
    summary: `${member.sandbox?.startsWith("sbx_") ? `[${member.sandbox}] ` : ""}${summarizeArgs(member.tool, member.args)}`,
    status:
      ending === null
        ? "running"
        : ending.cancelled
          ? "cancelled"
          : ending.isError
            ? "error"
            : "done",
    ...endingOf(member.args, state, ending),
    createdAt: member.createdAt,
    settledAt: ending?.settledAt ?? null,
    totalLines: state.truncation.totalLines,
    totalBytes: state.truncation.totalBytes,
  };
}

/**
 * Tells the run's object, if the call is in a run index. Never throws: a run index that
 * cannot be told must not fail the call itself (the next note, at the latest `settled`,
 * carries the whole row again).
 * @example await tellRun(env, record, { kind: "started", call })
 */
async function tellRun(env: Env, runId: string, note: RunNote): Promise<void> {
  try {
    const stub = env.RUNS.getByName(runId) as unknown as RunApi;
    await stub.note(note);
  } catch (error) {
    console.error(`run ${runId}: could not note ${note.kind}`, error);
  }
}

/**
 * The indexes a call is noted in: its run's (when it has a runId of its own) and, for a
 * background bash call, its caller's jobs index (`jobsIndexName`, decision 172).
 */
function indexesOf(member: RunMember): string[] {
  const names = inRunIndex(member) ? [member.runId] : [];
  if (isBackgroundCall(member)) names.push(jobsIndexName(member));
  return names;
}

/** Notes to every index of the call, at once. */
async function tellIndexes(env: Env, member: RunMember, note: RunNote): Promise<void> {
  await Promise.all(indexesOf(member).map((name) => tellRun(env, name, note)));
}

/** Notes a call's start in its run index (if it is in one). */
export function noteStarted(env: Env, member: RunMember, state: ToolOutputState): Promise<void> {
  return tellIndexes(env, member, { kind: "started", call: runCall(member, state, null) });
}

/** Notes a running call's current totals in its run index (if it is in one). */
export function noteProgress(env: Env, member: RunMember, state: ToolOutputState): Promise<void> {
  const { totalLines, totalBytes } = state.truncation;
  return tellIndexes(env, member, {
    kind: "progress",
    toolCallId: member.toolCallId,
    totalLines,
    totalBytes,
  });
}

/** Notes a call's end in its run index (if it is in one). */
export function noteSettled(
  env: Env,
  member: RunMember,
  state: ToolOutputState,
  ending: { isError: boolean; cancelled: boolean; settledAt: number },
): Promise<void> {
  return tellIndexes(env, member, { kind: "settled", call: runCall(member, state, ending) });
}

/**
 * How a failed call ended, beyond its status (decision 260): the time limit that stopped
 * it (bash's `details.stoppedBy`), or its command's own exit status.
 */
function endingOf(
  args: JsonValue,
  state: ToolOutputState,
  ending: { isError: boolean; cancelled: boolean } | null,
): Pick<RunCall, "stoppedBy" | "exitCode"> {
  if (ending === null || ending.cancelled || !ending.isError) return {};
  const details = state.details;
  const field = (name: string) =>
    details && typeof details === "object" && !Array.isArray(details) ? details[name] : null;
  const by = field("stoppedBy");
  const code = field("exitCode");
  if (by !== "timeout" && by !== "idleTimeout") {
    return typeof code === "number" && code > 0 && code < 256 ? { exitCode: code } : {};
  }
  const value = args && typeof args === "object" && !Array.isArray(args) ? args[by] : null;
  return { stoppedBy: { limit: by, seconds: typeof value === "number" ? value : null } };
}
