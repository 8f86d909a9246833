/**
 * A background call's first moment (decision 173): `bash { background: true }` waits
 * this long, then answers with what the call printed so far, counted as read.
 */
import { formatCount } from "../core/output/footer.ts";
import { plainTerminalText } from "../core/output/index.ts";
import type { InputState } from "../execenv/index.ts";
import {
  aheadWords,
  type InvocationView,
  MAX_JOB_WAIT_SECONDS,
  type Outcome,
  type OutputLines,
  queuedAheadOf,
  type ReadRange,
  type ResultPoll,
} from "../protocol/index.ts";
import { completeLines, jobStatus, outcomeValue, sameRange } from "./job-lines.ts";
import { inputText, isTtyCall, modelLines } from "./terminal-view.ts";

/** How long `bash { background: true }` waits before it answers: its first moment. */
const FIRST_MOMENT_MS = 1000;

/** What the first-moment answer needs of the job's DO, and of its output. */
interface JobReader {
  result(waitMs: number): Promise<Outcome<ResultPoll>>;
  view(): Promise<Outcome<InvocationView>>;
  commitRead(reader: string, range: ReadRange): Promise<Outcome<ReadRange>>;
  /** `outputLines` of this job (the Worker reads its spill through the sandbox). */
  lines(view: InvocationView, range: ReadRange): Promise<OutputLines>;
  /** Where its input stands (terminal-view.ts `inputStateOf`): null once it has ended. */
  input(view: InvocationView): Promise<InputState | null>;
}

/** The answer of a background call after its first moment (or its end, if that came first). */
interface FirstMoment {
  view: InvocationView;
  /** What it printed so far (the lines counted as read, when `shown` is set). */
  text: string;
  /** The lines `text` gave, counted as read: the first job_output continues after them. */
  shown: ReadRange | null;
  /** The sentence that says how to follow it. */
  note: string;
  /** Its screen and whether it waits for input, while it runs. */
  input: InputState | null;
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
      const plain = modelLines(view, lines);
      text = plain.length > 0 ? `${plain.join("\n")}\n` : "";
    } else if (t.truncated) text = "";
  } else if (isTtyCall(view)) text = plainTerminalText(text);
  const input = await job.input(view);
  // A full-screen program's lines are its repaints: its screen says what it shows.
  if (input?.screen?.alternate) text = "";
  text += inputText(input, view);
  const after = shown ? "the lines after these" : "its lines from line 1";
  const drive =
    isTtyCall(view) || input?.inputOpen
      ? ` · write_stdin {"id":"${id}","text":"…"} types into it`
      : "";
  const ahead = queuedAheadOf(view.state.details);
  // A command waiting its turn in its sandbox says so (decision 248).
  const how =
    ahead === null
      ? `Running in the background as ${id}`
      : `Queued in the background as ${id} (${aheadWords(ahead)}; it runs when a command before it ends)`;
  const note =
    view.status === "running"
      ? `[${how} · ${formatCount(t.totalLines)} ${t.totalLines === 1 ? "line" : "lines"} so far · job_output {"id":"${id}"} gives ${after} (with "wait": up to ${MAX_JOB_WAIT_SECONDS} s for more)${drive} · kill {"id":"${id}"} stops it · jobs lists your jobs]`
      : `[${id} ended in its first moment: ${jobStatus(view)}]`;
  return { view, text, shown, note, input };
}
