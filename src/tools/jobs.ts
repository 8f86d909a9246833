/**
 * Background jobs (docs/steering.md, decisions 172-173): `bash` with `background: true`
 * is an ordinary invocation whose caller does not wait for it; these tools look after it.
 * Each is an ordinary invocation too, so a retry of the same toolCallId answers the same.
 *
 * - `jobs {}`: the caller's running and recent background calls (its jobs index).
 * - `job_output { id, wait? }`: one call's state and its output lines that no earlier
 *   job_output of it was given (the cursor lives in the job's DO, keyed by the reading
 *   call's toolCallId), waiting up to `wait` seconds for new lines or the end.
 * - `kill { id }`: cancels a call and answers with its output, kept.
 */
import { z } from "zod";
import { formatCount, formatSize } from "../core/output/footer.ts";
import type { ToolOutput } from "../core/output/types.ts";
import { utf8ByteLength } from "../core/retention/utf8.ts";
import {
  INVOCATION_ID_PATTERN,
  type InvocationApi,
  type InvocationView,
  MAX_JOB_WAIT_SECONDS,
  type Outcome,
  type OutputLines,
  type ReadRange,
  type ResultPoll,
  type RunApi,
} from "../protocol/index.ts";
import { defineTool } from "./registry.ts";
import { sandboxClientFor } from "./sandbox.ts";
import type { ToolContext } from "./types.ts";

/** A `bash` call started with `background: true`. */
export function isBackgroundCall(call: { tool: string; args: unknown }): boolean {
  const args = call.args as { background?: unknown } | null;
  return call.tool === "bash" && typeof args === "object" && args?.background === true;
}

/** The jobs index of calls that name no run of their own. */
export const JOBS_OF_TOKEN = "jobs:token";

/**
 * The jobs index of a call's caller (decision 172): its run when it names one (a runId
 * other than its own toolCallId), else the API token's own list, which every call made
 * without a runId shares (every MCP call among them).
 * @example jobsIndexName({ toolCallId: "c1", runId: "c1" }) // "jobs:token"
 */
export function jobsIndexName(call: { toolCallId: string; runId: string }): string {
  return call.runId !== call.toolCallId ? `jobs:run:${call.runId}` : JOBS_OF_TOKEN;
}

/** Most lines one job_output gives; the next call continues. */
export const JOB_OUTPUT_LINES = 2000;
/** Most bytes of lines one job_output gives (its sink keeps room for the footer). */
export const JOB_OUTPUT_BYTES = 48 * 1024;

const jobId = z
  .string()
  .regex(INVOCATION_ID_PATTERN, "must be an invocation id")
  .describe("The invocation id bash answered with");

function stubOf(context: ToolContext, id: string): InvocationApi {
  return context.env.INVOCATIONS.getByName(id) as unknown as InvocationApi;
}

function outcomeValue<T>(outcome: Outcome<T>, id: string): T {
  if (outcome.ok) return outcome.value;
  if (outcome.error.code === "not_found") {
    throw new Error(
      `No invocation "${id}" (it never started, or it was retired). jobs lists yours.`,
    );
  }
  throw new Error(outcome.error.message);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The lines of `text`, each without its "\n". */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

/** Output lines a reader may be given now: all once settled, else only the ended ones. */
function completeLines(view: InvocationView): number {
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
export const JOB_LINE_CHARS = JOB_OUTPUT_BYTES;

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

function sameRange(a: ReadRange, b: ReadRange): boolean {
  return a.from === b.from && a.to === b.to;
}

/** How long `bash { background: true }` waits before it answers: its first moment. */
export const FIRST_MOMENT_MS = 1000;

/** What the first-moment answer needs of the job's DO, and of its output. */
export interface JobReader {
  result(waitMs: number): Promise<Outcome<ResultPoll>>;
  view(): Promise<Outcome<InvocationView>>;
  commitRead(reader: string, range: ReadRange): Promise<Outcome<ReadRange>>;
  /** `outputLines` of this job (the Worker reads its spill through the sandbox). */
  lines(view: InvocationView, range: ReadRange): Promise<OutputLines>;
}

/** The answer of a background call after its first moment (or its end, if that came first). */
export interface FirstMoment {
  view: InvocationView;
  /** What it printed so far (the lines counted as read, when `shown` is set). */
  text: string;
  /** The lines `text` gave, counted as read: the first job_output continues after them. */
  shown: ReadRange | null;
  /** The sentence that says how to follow it. */
  note: string;
}

/**
 * Waits the first moment (returning early if the call settles), then reads what the
 * call printed: its whole lines from line 1, at most one job_output's worth (from the
 * spill when they are no longer in its window). They count as read (under the reader
 * `<id>:start`), so the first job_output gives only the lines after them: no line is
 * given twice, and none is skipped, however much the first moment printed.
 * @example await firstMoment(reader, "call_1")
 */
export async function firstMoment(job: JobReader, id: string): Promise<FirstMoment> {
  outcomeValue(await job.result(FIRST_MOMENT_MS), id);
  const view = outcomeValue(await job.view(), id);
  const block = view.state.content[0];
  const whole = block?.type === "text" ? block.text : "";
  const t = view.state.truncation;
  let text = whole;
  let shown: ReadRange | null = null;
  if (view.status === "running") {
    const read = await job.lines(view, { from: 1, to: completeLines(view) });
    // A retry of the same call is given the range it was given; after a job_output
    // already read on, nothing is counted again (conflict) and the text is only a preview.
    const given = await job.commitRead(`${id}:start`, read.range);
    if (given.ok) {
      shown = given.value;
      const { lines } = sameRange(shown, read.range) ? read : await job.lines(view, shown);
      text = lines.length > 0 ? `${lines.join("\n")}\n` : "";
    } else if (t.truncated) text = "";
  }
  const after = shown ? "the lines after these" : "its lines from line 1";
  const note =
    view.status === "running"
      ? `[Running in the background as ${id} · ${formatCount(t.totalLines)} lines so far · job_output {"id":"${id}"} gives ${after} (with "wait": up to ${MAX_JOB_WAIT_SECONDS} s for more) · kill {"id":"${id}"} stops it · jobs lists your jobs]`
      : `[${id} ended in its first moment: ${jobStatus(view)}]`;
  return { view, text, shown, note };
}

/** How a call stands, in words: running, or how it ended. */
export function jobStatus(view: InvocationView): string {
  if (view.status === "running") return "running";
  if (view.cancelled) return "killed";
  const details = view.state.details as Record<string, unknown> | null;
  const by = details && typeof details === "object" ? details.stoppedBy : undefined;
  if (by === "timeout" || by === "idleTimeout") return `stopped by ${by}`;
  const code = details && typeof details === "object" ? details.exitCode : undefined;
  if (typeof code === "number") return `exited with code ${code}`;
  return view.isError ? "failed" : "done";
}

/** job_output's answer: the lines, then a footer that says where the job stands. */
function writeJobOutput(out: ToolOutput, view: InvocationView, lines: string[], range: ReadRange) {
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
  out.write(`[job ${view.id} · ${status} · ${span} · ${next}]`);
  const details = out.details as Record<string, unknown>;
  Object.assign(details, {
    job: view.id,
    status: view.status,
    from: range.from,
    to: range.to,
    totalLines: total,
    ended: status,
  });
}

const jobOutputParams = z.strictObject({
  id: jobId,
  wait: z
    .number()
    .min(0)
    .max(MAX_JOB_WAIT_SECONDS)
    .optional()
    .describe(
      `Seconds to wait for new output or the end when there is none yet (0-${MAX_JOB_WAIT_SECONDS}, default 0)`,
    ),
});

export const jobOutputTool = defineTool({
  name: "job_output",
  description:
    "Reads a background bash call: where it stands (running, or how it ended) and its output lines that no earlier job_output of it returned, each line exactly once, at most 2000 lines or 48 KB a call. With wait, waits up to that many seconds for new lines or the end.",
  params: jobOutputParams,
  output: { retain: "head", maxBytes: JOB_OUTPUT_BYTES + 2048, maxLines: JOB_OUTPUT_LINES + 8 },
  // The range given is stored in the job's DO under this call's id: a re-execution
  // answers the same lines.
  replaySafe: true,
  async execute({ params, out, signal, context }) {
    const target = stubOf(context, params.id);
    const reader = context.toolCallId;
    const deadline = Date.now() + (params.wait ?? 0) * 1000;
    for (let attempt = 0; ; attempt++) {
      const cursor = outcomeValue(await target.readCursor(reader), params.id);
      let view = outcomeValue(await target.view(), params.id);
      if (cursor.given) {
        const { lines } = await outputLines(context.env, view, cursor.given);
        return writeJobOutput(out, view, lines, cursor.given);
      }
      while (
        completeLines(view) < cursor.next &&
        view.status === "running" &&
        Date.now() < deadline &&
        !signal.aborted
      ) {
        await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
        view = outcomeValue(await target.view(), params.id);
      }
      const wanted = { from: cursor.next, to: completeLines(view) };
      const read = await outputLines(context.env, view, wanted);
      const given = await target.commitRead(reader, read.range);
      if (!given.ok && given.error.code === "conflict" && attempt < 5) continue;
      const committed = outcomeValue(given, params.id);
      // The range given is the one read, unless an earlier run of this call was given another.
      const { lines } = sameRange(committed, read.range)
        ? read
        : await outputLines(context.env, view, committed);
      return writeJobOutput(out, view, lines, committed);
    }
  },
});

export const killTool = defineTool({
  name: "kill",
  description:
    "Stops a running call (a background bash call, or any other) and answers with its output, which is kept. A call that has already ended is left as it is and its output returned.",
  params: z.strictObject({ id: jobId }),
  output: { maxBytes: 53_248 + 1024, maxLines: 2008 + 4 },
  replaySafe: true,
  async execute({ params, out, context }) {
    const target = stubOf(context, params.id);
    const cancelled = await target.cancel();
    if (!cancelled.ok && cancelled.error.code !== "conflict") outcomeValue(cancelled, params.id);
    const poll = outcomeValue(await target.result(30_000), params.id);
    const view = outcomeValue(await target.view(), params.id);
    if (poll.status === "settled") {
      const block = poll.result.content[0];
      if (block?.type === "text" && block.text !== "") {
        out.write(block.text.endsWith("\n") ? block.text : `${block.text}\n`);
      }
    }
    const status = jobStatus(view);
    const was = !cancelled.ok
      ? `had already ended (${status})`
      : status === "killed"
        ? "killed"
        : `was stopped (${status})`;
    out.write(`[job ${params.id} ${was}; its output is kept]`);
    Object.assign(out.details as Record<string, unknown>, {
      job: params.id,
      killed: cancelled.ok,
      ended: jobStatus(view),
    });
  },
});

/** Most jobs `jobs` lists, newest first. */
export const JOBS_LISTED = 50;

export const jobsTool = defineTool({
  name: "jobs",
  description:
    "Lists your running and recent background bash calls (newest first, at most 50): id, status, lines so far, and the command. Yours are those of your run (runId), or, for calls without a runId (every MCP call), those of your API token.",
  params: z.strictObject({}),
  replaySafe: true,
  async execute({ out, context }) {
    const index = context.env.RUNS.getByName(jobsIndexName(context)) as unknown as RunApi;
    const calls = (await index.calls()).sort((a, b) => b.createdAt - a.createdAt);
    const listed = calls.slice(0, JOBS_LISTED);
    if (listed.length === 0)
      out.write("No background jobs. Start one with bash { background: true }.");
    for (const call of listed) {
      const age = Math.max(0, Math.round((Date.now() - call.createdAt) / 1000));
      out.write(
        `${call.toolCallId}  ${call.status}  ${formatCount(call.totalLines)} lines, ${formatSize(call.totalBytes)}  ${age} s ago  ${call.summary}\n`,
      );
    }
    if (calls.length > listed.length)
      out.write(`[${calls.length - listed.length} older jobs not listed]`);
    Object.assign(out.details as Record<string, unknown>, {
      jobs: listed.map((c) => ({ id: c.toolCallId, status: c.status, totalLines: c.totalLines })),
    });
  },
});
