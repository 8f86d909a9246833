/**
 * `job_output { id, wait? }`: one background call's state and its output lines that no
 * earlier job_output of it was given (the cursor lives in the job's DO, keyed by the
 * reading call's toolCallId), waiting up to `wait` seconds for new lines or the end.
 */
import { z } from "zod";
import { formatSize } from "../core/output/footer.ts";
import { JOB_OUTPUT_BYTES, JOB_OUTPUT_LINES, MAX_JOB_WAIT_SECONDS } from "../protocol/index.ts";
import { jobId, jobOf, readNewLines, writeJobRead } from "./job-lines.ts";
import { defineTool } from "./registry.ts";
import { inputStateOf } from "./terminal-view.ts";

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
    const deadline = Date.now() + (params.wait ?? 0) * 1000;
    const target = jobOf(context, params.id);
    const reader = context.toolCallId;
    const read = await readNewLines(context.env, target, params.id, reader, deadline, signal);
    writeJobRead(out, read, await inputStateOf(context.env, read.view));
  },
});
