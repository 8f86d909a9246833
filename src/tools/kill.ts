/** `kill { id }`: cancels a call (a background bash call, or any other) and answers with its output, kept. */
import { z } from "zod";
import { OUTPUT_BYTES, OUTPUT_LINES } from "../protocol/index.ts";
import { jobId, jobOf, jobStatus, outcomeValue } from "./job-lines.ts";
import { defineTool } from "./registry.ts";

export const killTool = defineTool({
  name: "kill",
  description:
    "Stops a running call (a background bash call, or any other) and answers with its output, which is kept. A call that has already ended is left as it is and its output returned.",
  params: z.strictObject({ id: jobId }),
  // The call's own bounded answer (its default window and footer room), and a line of ours.
  output: { maxBytes: OUTPUT_BYTES + 2048 + 1024, maxLines: OUTPUT_LINES + 8 + 4 },
  replaySafe: true,
  async execute({ params, out, context }) {
    const target = jobOf(context, params.id);
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
