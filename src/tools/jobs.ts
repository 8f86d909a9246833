/**
 * `jobs {}`: the caller's running and recent background calls (docs/steering.md,
 * decisions 172-173), read from its jobs index. `bash` with `background: true` is an
 * ordinary invocation whose caller does not wait for it; `jobs`, `job_output`
 * (job-output.ts) and `kill` (kill.ts) look after it. Each is an ordinary invocation
 * too, so a retry of the same toolCallId answers the same.
 */
import { z } from "zod";
import { formatCount, formatSize } from "../core/output/footer.ts";
import type { RunApi } from "../protocol/index.ts";
import { defineTool } from "./registry.ts";

/** A `bash` call started with `background: true`. */
export function isBackgroundCall(call: { tool: string; args: unknown }): boolean {
  const args = call.args as { background?: unknown; tty?: unknown } | null;
  return (
    call.tool === "bash" &&
    typeof args === "object" &&
    (args?.background === true || args?.tty === true)
  );
}

/** The jobs index of calls in `default` that name no run of their own. */
const JOBS_OF_TOKEN = "jobs:token";

/**
 * The jobs index of a call's caller (decisions 172, 251): its run when it names one (a
 * runId other than its own toolCallId), else the operator's own list, which every call
 * made without a runId shares (every MCP call among them) — each within its sandbox: a
 * call in any sandbox but `default` has its sandbox's indexes, so `jobs` in one sandbox
 * never lists another's.
 * @example jobsIndexName({ toolCallId: "c1", runId: "c1" }) // "jobs:token"
 * @example jobsIndexName({ toolCallId: "c1", runId: "r", sandbox: "sbx_default_…" }) // "jobs:sandbox:sbx_default_…:run:r"
 */
export function jobsIndexName(call: {
  toolCallId: string;
  runId: string;
  sandbox?: string;
}): string {
  const ownRun = call.runId !== call.toolCallId;
  const sandbox = call.sandbox ?? "default";
  if (sandbox === "default") return ownRun ? `jobs:run:${call.runId}` : JOBS_OF_TOKEN;
  return ownRun ? `jobs:sandbox:${sandbox}:run:${call.runId}` : `jobs:sandbox:${sandbox}`;
}

/** Most jobs `jobs` lists, newest first. */
const JOBS_LISTED = 50;

export const jobsTool = defineTool({
  name: "jobs",
  description:
    "Lists your running and recent background bash calls (newest first, at most 50): id, status, lines so far, and the command. Yours are those of your run (runId), or, for calls without a runId (every MCP call), those made without one in your sandbox.",
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
