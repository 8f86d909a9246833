/**
 * How the job tools (jobs.ts, job-output.ts, kill.ts, write-stdin.ts) and a background
 * call's first moment (first-moment.ts) read a job: its DO, its outcomes, its status in
 * words, its output lines, from its bounded text or its spill, within one job_output's
 * budget, given to each reader once (`readNewLines`), and the answer that shows them.
 */
import { z } from "zod";
import { formatCount } from "../core/output/footer.ts";
import type { ToolOutput } from "../core/output/types.ts";
import { utf8ByteLength } from "../core/retention/utf8.ts";
import type { InputState } from "../execenv/index.ts";
import {
  INVOCATION_ID_PATTERN,
  type InvocationView,
  JOB_OUTPUT_BYTES,
  JOB_OUTPUT_LINES,
  type Outcome,
  type OutputLines,
  queuedAheadOf,
  queuedWords,
  type ReadRange,
  type TypedInput,
  typedByPeopleLine,
} from "../protocol/index.ts";
import { type ScopedCall, scopedCall } from "./call-scope.ts";
import { sandboxClientFor } from "./sandbox.ts";
import { inputDetails, inputText, isTtyCall, modelLines } from "./terminal-view.ts";
import type { ToolContext } from "./types.ts";

/** A job tool's `id` argument. */
export const jobId = z
  .string()
  .regex(INVOCATION_ID_PATTERN, "must be an invocation id")
  .describe("The invocation id bash answered with");

/**
 * The DO of job `id` as the calling tool reaches it: within the caller's own sandbox
 * only (`scopedCall`, decision 251); a job of another sandbox is "No invocation".
 */
export function jobOf(context: ToolContext, id: string): ScopedCall {
  return scopedCall(context.env, id, context.sandbox);
}

/** An outcome's value, or an error a caller can act on (a missing job names `jobs`). */
export function outcomeValue<T>(outcome: Outcome<T>, id: string): T {
  if (outcome.ok) return outcome.value;
  if (outcome.error.code === "not_found") {
    throw new Error(
      `No invocation "${id}" (it never started, or it was retired). jobs lists yours.`,
    );
  }
  throw new Error(outcome.error.message);
}

/** The lines of `text`, each without its "\n". */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

/** Output lines a reader may be given now: all once settled, else only the ended ones. */
export function completeLines(view: InvocationView): number {
  const t = view.state.truncation;
  if (view.status === "settled") return t.totalLines;
  const block = view.state.content[0];
  const text = block?.type === "text" ? block.text : "";
  const open = t.totalBytes > 0 && !text.endsWith("\n");
  return Math.max(0, t.totalLines - (open ? 1 : 0));
}

/**
 * Longest line job_output gives whole (as many characters as its byte budget holds of
 * ASCII); a longer line is given cut, with a note that names it in the spill.
 */
const JOB_LINE_CHARS = JOB_OUTPUT_BYTES;

/** A line cut to `JOB_LINE_CHARS`, saying where the whole of it is. */
function cutLine(line: string, n: number, spillPath: string | undefined): string {
  if (line.length <= JOB_LINE_CHARS) return line;
  const where = spillPath ? `line ${formatCount(n)} of ${spillPath}` : `line ${formatCount(n)}`;
  return `${line.slice(0, JOB_LINE_CHARS)}… [cut at ${formatCount(JOB_LINE_CHARS)} characters; the whole line is ${where}]`;
}

/**
 * Lines `range` of a call's output, at most `JOB_OUTPUT_LINES` and `JOB_OUTPUT_BYTES`
 * (the range returned says how far they reach), each whole up to `JOB_LINE_CHARS`:
 * from its bounded text where the text holds them (a tail window: the last lines; the
 * text's footer is not output), else from its spill file through the sandbox's `read`.
 * @example await outputLines(env, view, { from: 1, to: 40 })
 */
export async function outputLines(
  env: Env,
  view: InvocationView,
  range: ReadRange,
): Promise<OutputLines> {
  const t = view.state.truncation;
  const to = Math.min(range.to, range.from + JOB_OUTPUT_LINES - 1);
  if (to < range.from) return { lines: [], range: { from: range.from, to: range.from - 1 } };
  const block = view.state.content[0];
  const shown = splitLines(block?.type === "text" ? block.text : "").slice(0, t.outputLines);
  const args = view.args as { head?: unknown } | null;
  const tailWindow = !(typeof args === "object" && args?.head !== undefined);
  // The output line the text's first whole line is.
  const first = !t.truncated
    ? 1
    : tailWindow
      ? t.totalLines - t.outputLines + 1 + (t.lastLinePartial ? 1 : 0)
      : Number.POSITIVE_INFINITY;
  const offset = t.lastLinePartial && t.truncated ? 1 : 0;
  const lines: string[] = [];
  if (range.from < first) {
    if (!t.spillPath)
      throw new Error(`lines ${range.from}-${to} of ${view.id} are gone (no spill)`);
    const client = sandboxClientFor({ env, sandbox: view.sandbox });
    const read = await client.read({
      path: t.spillPath,
      offset: range.from,
      limit: Math.min(to, first - 1) - range.from + 1,
      // One more than is given whole, so a cut line is known to be cut.
      maxLineChars: JOB_LINE_CHARS + 1,
    });
    lines.push(...read.lines);
    // The read stopped at its own byte cap: the lines after it are the next call's, so
    // the range stays contiguous (no line skipped).
    if (read.lines.length < Math.min(to, first - 1) - range.from + 1) return given(lines);
  }
  for (let n = Math.max(range.from, first); n <= to; n++) {
    const line = shown[n - first + offset];
    if (line === undefined) break;
    lines.push(line);
  }
  return given(lines);

  /** `lines` (output lines from `range.from` on) within the byte budget, each cut to its cap. */
  function given(lines: string[]): OutputLines {
    let bytes = 0;
    let kept = 0;
    for (const line of lines) {
      bytes += utf8ByteLength(line) + 1;
      if (bytes > JOB_OUTPUT_BYTES && kept > 0) break;
      kept++;
    }
    return {
      lines: lines.slice(0, kept).map((line, i) => cutLine(line, range.from + i, t.spillPath)),
      range: { from: range.from, to: range.from + kept - 1 },
    };
  }
}

/** Whether two line ranges are the same. */
export function sameRange(a: ReadRange, b: ReadRange): boolean {
  return a.from === b.from && a.to === b.to;
}

/** How a call stands, in words: running, or how it ended. */
export function jobStatus(view: InvocationView): string {
  if (view.status === "running") {
    const ahead = queuedAheadOf(view.state.details);
    return ahead === null ? "running" : queuedWords(ahead);
  }
  if (view.cancelled) return "killed";
  const details = view.state.details as Record<string, unknown> | null;
  const by = details && typeof details === "object" ? details.stoppedBy : undefined;
  if (by === "timeout" || by === "idleTimeout") return `stopped by ${by}`;
  const code = details && typeof details === "object" ? details.exitCode : undefined;
  if (typeof code === "number") return `exited with code ${code}`;
  return view.isError ? "failed" : "done";
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The lines a reader was given, and the call as it stood when they were read. */
interface NewLines {
  view: InvocationView;
  lines: string[];
  range: ReadRange;
  /** What people typed into its terminal since the model's last read (decision 191). */
  typed: TypedInput[];
}

/** People's inputs given to `reader`; none for a call that is not a terminal. */
async function typedFor(target: ScopedCall, view: InvocationView, reader: string) {
  if (!isTtyCall(view)) return [];
  const typed = await target.typedSince(reader);
  return typed.ok ? typed.value : [];
}

/**
 * Gives `reader` the call's lines that no reader was given yet, waiting until `deadline`
 * (ms since the epoch) for one when there is none; a retry of the same reader is given
 * the same range again.
 * @example const { view, lines, range } = await readNewLines(context, target, "call_1", context.toolCallId, Date.now());
 */
export async function readNewLines(
  env: Env,
  target: ScopedCall,
  id: string,
  reader: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<NewLines> {
  for (let attempt = 0; ; attempt++) {
    const cursor = outcomeValue(await target.readCursor(reader), id);
    let view = outcomeValue(await target.view(), id);
    if (cursor.given) {
      const { lines } = await outputLines(env, view, cursor.given);
      return { view, lines, range: cursor.given, typed: await typedFor(target, view, reader) };
    }
    while (
      completeLines(view) < cursor.next &&
      view.status === "running" &&
      Date.now() < deadline &&
      !signal?.aborted
    ) {
      await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
      view = outcomeValue(await target.view(), id);
    }
    const wanted = { from: cursor.next, to: completeLines(view) };
    const read = await outputLines(env, view, wanted);
    const given = await target.commitRead(reader, read.range);
    if (!given.ok && given.error.code === "conflict" && attempt < 5) continue;
    const committed = outcomeValue(given, id);
    // The range given is the one read, unless an earlier run of this call was given another.
    const { lines } = sameRange(committed, read.range)
      ? read
      : await outputLines(env, view, committed);
    return { view, lines, range: committed, typed: await typedFor(target, view, reader) };
  }
}

/**
 * The answer of a read (job_output, write_stdin): the new lines (or a full-screen
 * program's screen), whether it waits for input, then a footer that says where the job
 * stands and what comes next.
 */
export function writeJobRead(out: ToolOutput, read: NewLines, input: InputState | null): void {
  const { view, range } = read;
  // A full-screen program's lines are its repaints: its screen says what it shows.
  const lines = input?.screen?.alternate ? [] : modelLines(view, read.lines);
  const total = view.state.truncation.totalLines;
  const status = jobStatus(view);
  if (lines.length > 0) out.write(`${lines.join("\n")}\n`);
  const span =
    range.to >= range.from
      ? `lines ${formatCount(range.from)}–${formatCount(range.to)} of ${formatCount(total)}`
      : `no new lines (${formatCount(total)} so far)`;
  const next =
    view.status === "running" || range.to < completeLines(view)
      ? `job_output {"id":"${view.id}"} gives the lines after these`
      : "that is all of its output";
  const typed = typedByPeopleLine(read.typed);
  if (typed !== "") out.write(`${typed}\n`);
  out.write(inputText(input, view));
  out.write(`[job ${view.id} · ${status} · ${span} · ${next}]`);
  const details = out.details as Record<string, unknown>;
  Object.assign(details, {
    job: view.id,
    status: view.status,
    from: range.from,
    to: range.to,
    totalLines: total,
    ended: status,
    ...(read.typed.length > 0 ? { typedByPeople: read.typed } : {}),
    ...inputDetails(input),
  });
}
