/**
 * `bash { command, timeout?, cwd? }`: runs a shell command in the sandbox. The sandbox
 * bounds the output at the source (tail, 50 KiB / 2000 lines) and spills the complete
 * output to a file; the sink mirrors the sandbox's view. The result ends with a footer
 * (line range, totals, spill path) when output was cut; a non-zero exit, a timeout or a
 * cancel fails the call with the output kept.
 */
import { z } from "zod";
import { DEFAULT_OUTPUT_POLICY, formatSize, type ToolOutput } from "../core/output/index.ts";
import {
  headPart,
  headPrefixBytes,
  joinHeadTail,
  type LineRange,
  sinkPolicy,
  sourceLimits,
  tailFirstLine,
  type WindowPlan,
  windowFooter,
  windowPlan,
} from "../execenv/bash-window.ts";
import {
  bashEnding,
  type ExecLimits,
  execIdFor,
  runShell,
  type SandboxClient,
  type ShellRunResult,
} from "../execenv/index.ts";
import {
  MAX_BASH_TIMEOUT_SECONDS,
  MAX_COMMAND_BYTES,
  MAX_WINDOW_BYTES,
  MAX_WINDOW_LINES,
  markQueued,
  OUTPUT_BYTES,
  OUTPUT_LINES,
  TTY_DEFAULT_SIZE,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
  workerConfig,
} from "../protocol/index.ts";
import { defineTool } from "./registry.ts";
import { sandboxClientFor } from "./sandbox.ts";
import type { StretchEnd } from "./types.ts";

/**
 * Room the sink keeps above the sandbox's window for what bash appends after the output
 * (footer, exit status, error text), so appending them never pushes output lines out.
 */
const BASH_ENDING_ROOM = { bytes: 2048, lines: 8 } as const;

const utf8 = new TextEncoder();

export const bashParams = z
  .strictObject({
    command: z
      .string()
      .min(1)
      // Checked here, at the edge, in bytes as exec counts them: a command the host would
      // refuse is a 400 at create, not a call that is accepted and then fails.
      .refine((command) => utf8.encode(command).length <= MAX_COMMAND_BYTES, {
        message: `a command may have at most ${MAX_COMMAND_BYTES.toLocaleString("en-US")} bytes (the kernel's limit on one argument); write a longer script to a file and run that file`,
      })
      .describe("Shell command, run with bash -c (bash syntax: {1..3}, [[ … ]], arrays)"),
    timeout: z
      .number()
      .positive()
      .max(MAX_BASH_TIMEOUT_SECONDS)
      .optional()
      .describe(
        "Hard limit: seconds before the whole process group is killed, however much it prints (output kept)",
      ),
    idleTimeout: z
      .number()
      .positive()
      .max(MAX_BASH_TIMEOUT_SECONDS)
      .optional()
      .describe(
        "Seconds without output before the process group is killed: a command that keeps printing runs on (output kept)",
      ),
    cwd: z
      .string()
      .max(4096)
      .optional()
      .describe("Working directory, relative to the workspace root (/workspace) or under it"),
    background: z
      .boolean()
      .optional()
      .describe(
        "Answer at once with the invocation id and the first second of output; the command runs on, surviving restarts. Read it with job_output, stop it with kill, list with jobs",
      ),
    tty: z
      .boolean()
      .optional()
      .describe(
        "Run under a terminal (isatty true, TERM set, Ctrl-C works): for programs that prompt (npm init, ssh-keygen, git rebase -i, 'Proceed? [y/N]'), REPLs (python3, node) and full-screen programs (less, vim, top). A tty call runs in the background like background: true; it answers with the job id, what the terminal shows and whether it waits for input. Drive it with write_stdin",
      ),
    cols: z
      .int()
      .min(TTY_MIN_SIZE.cols)
      .max(TTY_MAX_SIZE.cols)
      .optional()
      .describe(
        `Terminal width of a tty call (${TTY_MIN_SIZE.cols}-${TTY_MAX_SIZE.cols}, default ${TTY_DEFAULT_SIZE.cols})`,
      ),
    rows: z
      .int()
      .min(TTY_MIN_SIZE.rows)
      .max(TTY_MAX_SIZE.rows)
      .optional()
      .describe(
        `Terminal height of a tty call (${TTY_MIN_SIZE.rows}-${TTY_MAX_SIZE.rows}, default ${TTY_DEFAULT_SIZE.rows})`,
      ),
    head: z
      .int()
      .min(1)
      .max(MAX_WINDOW_LINES)
      .optional()
      .describe(
        `Show the first N lines of the output (1-${MAX_WINDOW_LINES}); with tail, the first N and the last M, the middle named in the footer`,
      ),
    tail: z
      .int()
      .min(1)
      .max(MAX_WINDOW_LINES)
      .optional()
      .describe(
        `Show the last N lines of the output (1-${MAX_WINDOW_LINES}; default ${OUTPUT_LINES} when head is not given)`,
      ),
    maxBytes: z
      .int()
      .min(1)
      .max(MAX_WINDOW_BYTES)
      .optional()
      .describe(
        `Byte budget of the shown output (1-${MAX_WINDOW_BYTES}; default ${DEFAULT_OUTPUT_POLICY.maxBytes}); head and tail share it by their lines`,
      ),
  })
  .refine((p) => (p.head ?? 0) + (p.tail ?? 0) <= MAX_WINDOW_LINES, {
    message: `head + tail must be at most ${MAX_WINDOW_LINES} lines`,
    path: ["tail"],
  })
  .refine((p) => p.tty === true || (p.cols === undefined && p.rows === undefined), {
    message: "cols and rows size a terminal: give them with tty: true",
    path: ["cols"],
  });

type BashParams = z.output<typeof bashParams>;

interface RunBashOptions {
  /** True when the DO resumes after eviction: rejoin the running exec instead of starting it. */
  reattach: boolean;
  /** How long to keep rejoining a stream that broke mid-run. */
  rejoinBudgetMs: number;
  /** Let go of the stream after this long (the exec keeps running); unset: to the exit. */
  stretchMs?: number;
}

/**
 * Runs (or, with `reattach`, rejoins) the command as exec `execId` and writes its
 * bounded output, footer and exit status to `out`. Throws when the command failed.
 * With `stretchMs`, returns `"parked"` (nothing appended) if the stretch ends first.
 * @example await runBash(client, execId, { command: "ls" }, out, signal, { reattach: false, rejoinBudgetMs: 30_000 });
 */
async function runBash(
  client: SandboxClient,
  execId: string,
  params: BashParams,
  out: ToolOutput,
  signal: AbortSignal,
  options: RunBashOptions,
): Promise<StretchEnd> {
  const plan = windowPlan(params);
  const limits: ExecLimits = sourceLimits(plan);
  const result = await runShell(
    client,
    {
      execId,
      command: params.command,
      cwd: params.cwd,
      timeoutSec: params.timeout,
      idleTimeoutSec: params.idleTimeout,
      limits,
      // A background call's stdin stays open for write_stdin; a tty call's is its terminal.
      ...(params.tty
        ? {
            tty: {
              cols: params.cols ?? TTY_DEFAULT_SIZE.cols,
              rows: params.rows ?? TTY_DEFAULT_SIZE.rows,
            },
          }
        : params.background
          ? { stdin: true }
          : {}),
    },
    out,
    signal,
    {
      reattach: options.reattach,
      reconnectBudgetMs: options.rejoinBudgetMs,
      windowMs: options.stretchMs,
      onQueue: (ahead) => markQueued(out.details, ahead),
    },
  );
  if (result.parked) return "parked";
  markQueued(out.details, null);
  // How the process ended, for adapters that report it as data (MCP's structuredContent).
  const details = out.details;
  if (typeof details === "object" && details !== null && !Array.isArray(details)) {
    details.exitCode = result.exit.exitCode;
    if (result.exit.signal) details.signal = result.exit.signal;
    // Which limit ended it, as data: "timeout" (the wall clock) or "idleTimeout".
    if (result.exit.stoppedBy) details.stoppedBy = result.exit.stoppedBy;
  }
  const middle =
    plan.kind === "headTail" ? await foldHead(client, execId, plan, out, result, signal) : null;
  const ending = bashEnding(result, (meta) => windowFooter(plan, meta, middle));
  if (ending.footer !== "") out.write(ending.footer);
  else if (result.metadata?.totalBytes === 0 && !ending.error) out.write("(no output)");
  if (signal.aborted) throw new Error("Command cancelled; its process group was terminated");
  if (ending.error) throw new Error(ending.error);
  return "exited";
}

/**
 * At the exit of a head+tail call: the head, read from the start of the spill, goes in
 * front of the tail the sandbox streamed, with a line naming the omitted middle. Returns
 * the omitted range (null when nothing was omitted, or no spill was kept).
 */
async function foldHead(
  client: SandboxClient,
  execId: string,
  plan: Extract<WindowPlan, { kind: "headTail" }>,
  out: ToolOutput,
  result: ShellRunResult,
  signal: AbortSignal,
): Promise<LineRange | null> {
  const tail = result.metadata;
  if (!tail?.truncated || !tail.spillPath) return null;
  // The tail as the sandbox holds it: a finished exec's stream starts with its whole text.
  const text = await finishedText(client, execId, signal);
  if (text === null) return null;
  const prefix = await client.spillHead(execId, headPrefixBytes(plan), signal);
  const head = headPart(prefix, plan.head, plan.headBytes, tailFirstLine(tail));
  const joined = joinHeadTail(plan, head, text, tail);
  out.capture(joined.truncation);
  out.replace(joined.text);
  result.metadata = joined.truncation;
  result.endsWithNewline = joined.text === "" || joined.text.endsWith("\n");
  return joined.omitted;
}

/** The whole text of a finished exec's window (its stream's `replace` base), or null. */
async function finishedText(
  client: SandboxClient,
  execId: string,
  signal: AbortSignal,
): Promise<string | null> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const update of client.reattach(execId, stop.signal)) {
      return update.kind === "replace" ? update.output.text : null;
    }
    return null;
  } finally {
    signal.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

export const bashTool = defineTool({
  name: "bash",
  description: `Runs a shell command in the sandbox workspace. Output (stdout and stderr together) is cut to the last ${OUTPUT_LINES} lines or ${formatSize(OUTPUT_BYTES)}, or to the window head/tail/maxBytes ask for; the complete output is then saved to a read-only file named in the footer (under /toolwire/spill, outside the workspace), with the read call that shows the rest: pass that path to read or grep (a grep of the workspace does not search it), or cat it in a later command. timeout is the hard limit, idleTimeout stops a command that prints nothing for that long; either keeps the output and says which limit ended it. background: true answers at once and lets the command run on (job_output, kill, jobs): the way to run long commands when the client cannot wait; write_stdin feeds its stdin. tty: true runs it under a terminal (prompts, REPLs, less, vim), in the background, driven with write_stdin. Non-zero exit codes, timeouts and cancels fail the call with the output kept.`,
  params: bashParams,
  output: sinkPolicy(windowPlan({}), BASH_ENDING_ROOM),
  outputFor: (params) => sinkPolicy(windowPlan(params), BASH_ENDING_ROOM),
  replaySafe: false,
  sandbox: true,
  // The DO follows bash in stretches, so that no stretch keeps the object busy for long:
  // each starts the command, or with `reattach` rejoins the exec whose id derives from the
  // call id (after eviction, a restart or the previous stretch), and reads it for at most
  // SANDBOX_STREAM_WINDOW_SECONDS.
  stretch: {
    async run({ params, out, signal, context, reattach }) {
      const execId = await execIdFor(context.toolCallId);
      return runBash(sandboxClientFor(context), execId, params, out, signal, {
        reattach,
        rejoinBudgetMs: workerConfig(context.env).sandboxRejoinMs,
        stretchMs: workerConfig(context.env).sandboxStreamStretchMs,
      });
    },
    async kill(context) {
      await sandboxClientFor(context).kill(await execIdFor(context.toolCallId));
    },
  },
});
