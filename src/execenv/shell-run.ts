import { formatTruncationFooter } from "../core/output/footer.ts";
import type { ShellOutputMetadata, ToolOutput } from "../core/output/types.ts";
import {
  CONTAINER_STOPPED,
  SandboxHttpError,
  SandboxStreamError,
  SandboxUnreachableError,
} from "./errors.ts";
import type { SandboxClient } from "./sandbox-client.ts";
import type { ExecRequest, ShellUpdate } from "./types.ts";

type ExitUpdate = Extract<ShellUpdate, { kind: "exit" }>;

interface ShellRunOptions {
  /** Join `req.execId`, already running (or recently finished), instead of starting it. */
  reattach: boolean;
  /** After a cancel, how long to wait for the exit before giving up on the stream. Default 10 s. */
  cancelGraceMs?: number;
  /** How long to keep reattaching after the stream breaks mid-run. Default 30 s. */
  reconnectBudgetMs?: number;
  /**
   * Stop reading this long after the first update and return with `parked: true`,
   * leaving the exec running (rejoin it with `reattach`). Unset: read to the exit.
   */
  windowMs?: number;
  /** The exec waits its turn with `ahead` commands before it; null: it runs (decision 248). */
  onQueue?: (ahead: number | null) => void;
}

export interface ShellRunResult {
  exit: ExitUpdate;
  /** The last source-owned totals (null only if the exec printed no update at all). */
  metadata: ShellOutputMetadata | null;
  /** Whether the folded text ends with "\n" (or is empty), so a footer starts on its own line. */
  endsWithNewline: boolean;
  /** The window ended before the exit: the exec still runs and `exit` means nothing yet. */
  parked: boolean;
}

/**
 * Runs (or rejoins) one sandbox exec and folds its Shell updates into `out`:
 * `replace` → `capture` + `out.replace`, `append` → `capture` + `out.write`,
 * `slide` → `capture` + `out.slide`, `metadata` → `capture`. The totals come first, so
 * the sink holds the source's bounds before the text arrives and takes the text as the
 * source windowed it (no second window). A stream that breaks
 * mid-run is rejoined with backoff (each rejoin starts from a `replace` base, so
 * nothing is applied twice). On `signal` abort the exec is killed and the stream is
 * read to its exit so the final output is kept. With `windowMs` the stream is let go
 * once the window is over (unless a cancel is under way) and the result says `parked`.
 * @example
 * const result = await runShell(client, { execId, command: "make" }, out, signal, { reattach: false });
 */
export async function runShell(
  client: SandboxClient,
  req: ExecRequest,
  out: ToolOutput,
  signal: AbortSignal,
  options: ShellRunOptions,
): Promise<ShellRunResult> {
  signal.throwIfAborted();
  const stream = new AbortController();
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => {
    client.kill(req.execId).catch(() => {});
    giveUp = setTimeout(() => stream.abort(signal.reason), options.cancelGraceMs ?? 10_000);
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const state: ShellRunResult = {
    exit: { kind: "exit", exitCode: null },
    metadata: null,
    endsWithNewline: true,
    parked: false,
  };
  let window: ReturnType<typeof setTimeout> | undefined;
  let windowEnded = false;
  const startWindow = () => {
    if (window !== undefined || options.windowMs === undefined) return;
    window = setTimeout(() => {
      if (signal.aborted) return; // a cancel reads on to the exit
      windowEnded = true;
      stream.abort(new Error("stream window ended"));
    }, options.windowMs);
  };
  const budget = options.reconnectBudgetMs ?? 30_000;
  let rejoin = options.reattach;
  let brokeAt: number | null = null;
  let backoff = 250;
  try {
    for (;;) {
      const updates = rejoin
        ? client.reattach(req.execId, stream.signal)
        : client.exec(req, stream.signal);
      try {
        for await (const update of updates) {
          startWindow();
          brokeAt = null;
          backoff = 250;
          if (update.kind === "exit") {
            state.exit = update;
            return state;
          }
          if (update.kind === "queue") {
            options.onQueue?.(update.ahead);
            continue;
          }
          // A base (a rejoin's first update) is followed by a queue line only if it still waits.
          if (update.kind === "replace") options.onQueue?.(null);
          applyShellUpdate(update, out, state);
        }
      } catch (err) {
        if (windowEnded) {
          state.parked = true;
          return state;
        }
        const retryable =
          err instanceof SandboxStreamError || (rejoin && err instanceof SandboxUnreachableError);
        if (!retryable || stream.signal.aborted) throw err;
        brokeAt ??= Date.now();
        if (Date.now() - brokeAt + backoff > budget) {
          throw new Error(
            `lost the sandbox stream of exec ${req.execId} and could not rejoin it within ${budget / 1000} s: ${(err as Error).message}; the output up to here is kept`,
          );
        }
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 4000);
      }
      rejoin = true;
    }
  } catch (err) {
    if (err instanceof SandboxHttpError && err.code === CONTAINER_STOPPED) {
      throw new Error(`${err.reason}; the output up to here is kept`);
    }
    if (err instanceof SandboxHttpError && err.status === 404 && rejoin) {
      throw new Error(
        `the sandbox no longer knows exec ${req.execId} (it finished more than 10 minutes ago, or the sandbox host restarted); the output up to here is kept`,
      );
    }
    throw err;
  } finally {
    signal.removeEventListener("abort", onAbort);
    clearTimeout(giveUp);
    clearTimeout(window);
  }
}

function applyShellUpdate(
  update: Exclude<ShellUpdate, ExitUpdate | { kind: "queue" }>,
  out: ToolOutput,
  state: ShellRunResult,
): void {
  switch (update.kind) {
    case "replace": {
      const { text, ...metadata } = update.output;
      out.capture(metadata);
      out.replace(text);
      state.metadata = metadata;
      state.endsWithNewline = text === "" || text.endsWith("\n");
      return;
    }
    case "append":
      out.capture(update.metadata);
      out.write(update.text);
      state.metadata = update.metadata;
      if (update.text !== "") state.endsWithNewline = update.text.endsWith("\n");
      return;
    case "slide":
      out.capture(update.metadata);
      out.slide(update.drop, update.text);
      state.metadata = update.metadata;
      if (update.text !== "") state.endsWithNewline = update.text.endsWith("\n");
      else if (update.metadata.outputBytes === 0) state.endsWithNewline = true;
      return;
    case "metadata":
      out.capture(update.metadata);
      state.metadata = update.metadata;
      return;
  }
}

/**
 * What `bash` appends once the command is done: the truncation footer (line range,
 * totals, spill path) when the output was cut, and the error to throw when the command
 * failed, timed out or was killed (the sink appends a thrown error's text).
 * @example bashEnding(result) // { footer: "\n[Showing lines 1,001–3,000 of 3,000. Full output: …]", error: "Command exited with code 2" }
 */
export function bashEnding(
  result: ShellRunResult,
  footerOf: (meta: ShellOutputMetadata) => string = (meta) =>
    formatTruncationFooter(meta, { retain: "tail" }),
): { footer: string; error: string | null } {
  const notice = result.metadata ? footerOf(result.metadata) : "";
  const footer = notice === "" ? "" : `${result.endsWithNewline ? "" : "\n"}\n${notice}`;
  const { exitCode, signal, error } = result.exit;
  if (error) return { footer, error };
  if (signal) return { footer, error: `Command was terminated by ${signal}` };
  if (exitCode !== 0) return { footer, error: `Command exited with code ${exitCode}` };
  return { footer, error: null };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
