// The tasks-extension fixtures of the conformance suite that are Toolwire tools, so the
// tasks they become live in invocation DOs like every real call (docs/decisions/106):
// `slow_compute` sleeps, then reports; `failing_job` fails after about a second (a tool
// error: its task completes with result.isError). Registered in the conformance Worker
// only; production lists neither.
import { z } from "zod";
import { type AnyTool, defineTool, registerTool } from "../../../src/tools/index.ts";

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export const slowComputeTool = defineTool({
  name: "slow_compute",
  description: "Sleeps `seconds` seconds, then reports (conformance fixture)",
  params: z.looseObject({
    seconds: z.number().min(0).max(600).default(0),
    label: z.string().max(200).default("compute"),
  }),
  replaySafe: true,
  async execute({ params, out, signal }) {
    out.write(`slow_compute ${params.label}: started\n`);
    if (params.seconds > 0) await sleep(params.seconds * 1000, signal);
    out.write(`slow_compute ${params.label}: done after ${params.seconds} s\n`);
  },
});

export const failingJobTool = defineTool({
  name: "failing_job",
  description: "Fails with a tool error after about a second (conformance fixture)",
  params: z.looseObject({}),
  replaySafe: true,
  async execute({ out, signal }) {
    out.write("failing_job: working\n");
    await sleep(1000, signal);
    throw new Error("failing_job failed on purpose");
  },
});

/** The task fixtures, registered with Toolwire's tools once per isolate. */
export const TASK_FIXTURES: AnyTool[] = [slowComputeTool, failingJobTool];
for (const tool of TASK_FIXTURES) registerTool(tool);
