/**
 * `bash { command, timeout?, cwd? }`: runs a shell command in the sandbox. The sandbox
 * bounds the output at the source (tail, 50 KiB / 2000 lines) and spills the complete
 * output to a file; the sink mirrors the sandbox's view. The result ends with a footer
 * (line range, totals, spill path) when output was cut; a non-zero exit, a timeout or a
 * cancel fails the call with the output kept.
 */
import { z } from "zod";
import {
  bashEnding,
  type ExecLimits,
  execIdFor,
  runShell,
  type SandboxClient,
  type ShellSink,
} from "../execenv/index.ts";
import { DEFAULT_OUTPUT_POLICY, type ToolOutput } from "../output/index.ts";
import { defineTool } from "./registry.ts";
import { sandboxClientFor } from "./sandbox.ts";
import type { ToolContext } from "./types.ts";

/**
 * Room the sink keeps above the sandbox's window for what bash appends after the output
 * (footer, exit status, error text), so appending them never pushes output lines out.
 */
export const BASH_ENDING_ROOM = { bytes: 2048, lines: 8 } as const;

/** Default seconds `bash` keeps rejoining an exec whose stream broke (`SANDBOX_REJOIN_SECONDS`). */
export const DEFAULT_REJOIN_SECONDS = 30;

/**
 * How long a broken exec stream is rejoined (with backoff) before the call settles as
 * an error with its output kept. Missing, zero, negative or non-numeric → 30 s.
 * @example rejoinBudgetMs({ SANDBOX_REJOIN_SECONDS: "5" }) // 5000
 */
export function rejoinBudgetMs(env: Pick<Env, "SANDBOX_REJOIN_SECONDS">): number {
  const seconds = Number(env.SANDBOX_REJOIN_SECONDS ?? DEFAULT_REJOIN_SECONDS);
  return Math.round(
    (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_REJOIN_SECONDS) * 1000,
  );
}

/** Default seconds the DO reads a bash stream before letting go of it (`SANDBOX_STREAM_WINDOW_SECONDS`). */
export const DEFAULT_STREAM_WINDOW_SECONDS = 10;

/**
 * How long the Durable Object reads one bash stream before it lets go and rejoins from
 * its alarm (docs/decisions/046). Missing, zero, negative or non-numeric → 10 s.
 * @example streamWindowMs({ SANDBOX_STREAM_WINDOW_SECONDS: "1" }) // 1000
 */
export function streamWindowMs(env: Pick<Env, "SANDBOX_STREAM_WINDOW_SECONDS">): number {
  const seconds = Number(env.SANDBOX_STREAM_WINDOW_SECONDS ?? DEFAULT_STREAM_WINDOW_SECONDS);
  const valid = Number.isFinite(seconds) && seconds > 0;
  return Math.round((valid ? seconds : DEFAULT_STREAM_WINDOW_SECONDS) * 1000);
}

/** Longest timeout a call may ask for: one day. */
export const MAX_BASH_TIMEOUT_SECONDS = 86_400;

export const bashParams = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(256 * 1024)
    .describe("Shell command, run with bash -c (bash syntax: {1..3}, [[ … ]], arrays)"),
  timeout: z
    .number()
    .positive()
    .max(MAX_BASH_TIMEOUT_SECONDS)
    .optional()
    .describe("Seconds before the whole process group is killed"),
  cwd: z
    .string()
    .max(4096)
    .optional()
    .describe("Working directory, relative to the workspace root"),
});

export type BashParams = z.output<typeof bashParams>;

export interface RunBashOptions {
  /** True when the DO resumes after eviction: rejoin the running exec instead of starting it. */
  reattach: boolean;
  /** How long to keep rejoining a stream that broke mid-run. */
  rejoinBudgetMs: number;
  /** Let go of the stream after this long (the exec keeps running); unset: to the exit. */
  windowMs?: number;
}

/** How one stretch of a bash call ended: the command exited, or the window let go of it. */
export type BashStretch = "exited" | "parked";

/**
 * Runs (or, with `reattach`, rejoins) the command as exec `execId` and writes its
 * bounded output, footer and exit status to `out`. Throws when the command failed.
 * With `windowMs`, returns `"parked"` (nothing appended) if the window ends first.
 * @example await runBash(client, execId, { command: "ls" }, out, signal, { reattach: false, rejoinBudgetMs: 30_000 });
 */
export async function runBash(
  client: SandboxClient,
  execId: string,
  params: BashParams,
  out: ToolOutput,
  signal: AbortSignal,
  options: RunBashOptions,
): Promise<BashStretch> {
  const limits: ExecLimits = { ...DEFAULT_OUTPUT_POLICY };
  const result = await runShell(
    client,
    { execId, command: params.command, cwd: params.cwd, timeoutSec: params.timeout, limits },
    shellSink(out),
    signal,
    {
      reattach: options.reattach,
      reconnectBudgetMs: options.rejoinBudgetMs,
      windowMs: options.windowMs,
    },
  );
  if (result.parked) return "parked";
  const ending = bashEnding(result);
  if (ending.footer !== "") out.write(ending.footer);
  else if (result.metadata?.totalBytes === 0 && !ending.error) out.write("(no output)");
  if (signal.aborted) throw new Error("Command cancelled; its process group was terminated");
  if (ending.error) throw new Error(ending.error);
  return "exited";
}

/**
 * One stretch of a `bash` call as the Durable Object runs it: starts the command (or,
 * with `reattach`, rejoins the exec whose id derives from the call id, after eviction,
 * a restart or the previous stretch) and reads it for at most `SANDBOX_STREAM_WINDOW_SECONDS`,
 * so that no stretch holds the object busy for long.
 * @example if ((await runBashStretch(id, params, signal, out, context, true)) === "parked") rearm();
 */
export async function runBashStretch(
  toolCallId: string,
  params: BashParams,
  signal: AbortSignal,
  out: ToolOutput,
  context: ToolContext,
  reattach: boolean,
): Promise<BashStretch> {
  return runBash(sandboxClientFor(context), await execIdFor(toolCallId), params, out, signal, {
    reattach,
    rejoinBudgetMs: rejoinBudgetMs(context.env),
    windowMs: streamWindowMs(context.env),
  });
}

/**
 * Kills a call's exec while no stretch reads it (a cancel between stretches).
 * @example await killBash(toolCallId, context);
 */
export async function killBash(toolCallId: string, context: ToolContext): Promise<void> {
  await sandboxClientFor(context).kill(await execIdFor(toolCallId));
}

export const bashTool = defineTool({
  name: "bash",
  description:
    "Runs a shell command in the sandbox workspace. Output (stdout and stderr together) is cut to the last 2000 lines or 50 KB; the complete output is then saved to a file named in the footer, which read and grep can open. Non-zero exit codes, timeouts and cancels fail the call with the output kept.",
  params: bashParams,
  output: {
    retain: "tail",
    maxBytes: DEFAULT_OUTPUT_POLICY.maxBytes + BASH_ENDING_ROOM.bytes,
    maxLines: DEFAULT_OUTPUT_POLICY.maxLines + BASH_ENDING_ROOM.lines,
  },
  replaySafe: false,
  async execute(toolCallId, params, signal, out, context) {
    await runBash(sandboxClientFor(context), await execIdFor(toolCallId), params, out, signal, {
      reattach: false,
      rejoinBudgetMs: rejoinBudgetMs(context.env),
    });
  },
});

function shellSink(out: ToolOutput): ShellSink {
  const slide = (out as Partial<ShellSink>).slide;
  if (typeof slide !== "function") {
    throw new Error("bash needs a sink with slide(drop, text) to mirror the sandbox's tail window");
  }
  return out as ShellSink;
}
