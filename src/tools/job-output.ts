/**
 * `job_output { id, wait? }`: one background call's state and its output lines that no
 * earlier job_output of it was given (the cursor lives in the job's DO, keyed by the
 * reading call's toolCallId), waiting up to `wait` seconds for new lines or the end.
 */
import { z } from "zod";
import { formatCount, formatSize } from "../core/output/footer.ts";
import type { ToolOutput } from "../core/output/types.ts";
import {
  type InvocationView,
  JOB_OUTPUT_BYTES,
  JOB_OUTPUT_LINES,
  MAX_JOB_WAIT_SECONDS,
  type ReadRange,
} from "../protocol/index.ts";
import {
  completeLines,
  jobId,
  jobStatus,
  outcomeValue,
  outputLines,
  sameRange,
  stubOf,
} from "./job-lines.ts";
import { defineTool } from "./registry.ts";

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
  description: `Reads a background bash call: where it stands (running, or how it ended) and its output lines that no earlier job_output of it returned, each line exactly once, at most ${JOB_OUTPUT_LINES} lines or ${formatSize(JOB_OUTPUT_BYTES)} a call. With wait, waits up to that many seconds for new lines or the end.`,
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
