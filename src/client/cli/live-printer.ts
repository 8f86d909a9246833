import { formatCount } from "../../core/output/footer.ts";
import type { ToolOutputState } from "../../core/output/types.ts";
import { queuedAheadOf, queuedWords } from "../../protocol/index.ts";
import { type CallEnding, wholeOutputCommand, withoutModelFooter } from "../call-story.ts";
import { formatElapsed } from "../elapsed.ts";
import { OutputFollower } from "../output-follower.ts";
import type { Subscription, SubscriptionOutcome } from "../subscription.ts";
import { describeTruncation, formatBytes } from "../truncation-notice.ts";
import { TerminalFilter } from "./terminal-filter.ts";

/** Where the CLI writes. `isTTY` decides the progress line and the line-start bookkeeping. */
export interface Terminal {
  stdout: {
    write(text: string | Uint8Array): unknown;
    isTTY?: boolean;
    /** Present on a Node stream: `toolwire output` waits for "drain" on it. */
    once?(event: "drain", listener: () => void): unknown;
  };
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
}

const CLEAR_LINE = "\r\u001b[2K";
/** Failed reconnects in a row after which the printer says why (and again every so many). */
const RETRIES_BEFORE_SAYING_WHY = 3;

/**
 * Prints a live subscription to a terminal: only the new text of each state on stdout
 * (a sliding window never prints a line twice), notices on stderr, and a progress line
 * (bytes, lines, elapsed) on stderr when stderr is a terminal.
 *
 * @example
 * const printer = new LivePrinter(process, Date.now());
 * sub.onChange((s) => printer.update(s));
 * printer.finish(await sub.finished);
 */
export class LivePrinter {
  readonly #follower: OutputFollower;
  readonly #term: Terminal;
  readonly #startedAt: number;
  readonly #progress: boolean;
  #atLineStart = true;
  #progressShown = false;
  #lastStatus = "connecting";
  #totals = { bytes: 0, lines: 0 };
  /** Bytes counted but not shown since the last printed text: said once, where the gap is. */
  #unshown = 0;
  #ticker: ReturnType<typeof setInterval> | null = null;
  /** Keeps a command's control sequences (all but colours) from acting on a terminal. */
  readonly #filter: TerminalFilter | null;
  /** The reconnect attempt whose reason was last printed. */
  #explainedAttempt = 0;
  /** Commands ahead of this one in its sandbox's line, while it waits its turn (decision 248). */
  #queued: number | null = null;

  /** `retain`: the tool's output policy, when known (see `OutputFollower`). */
  constructor(term: Terminal, startedAt: number, retain?: "head" | "tail") {
    this.#follower = new OutputFollower(retain);
    this.#term = term;
    this.#startedAt = startedAt;
    this.#progress = term.stderr.isTTY === true;
    this.#filter = term.stdout.isTTY ? new TerminalFilter() : null;
    if (this.#progress) {
      this.#ticker = setInterval(() => this.#drawProgress(), 250);
      this.#ticker.unref?.();
    }
  }

  update(sub: Subscription): void {
    if (sub.state) {
      const step = this.#follower.next(forPeople(sub.state));
      if (step.restarted) {
        this.#notice("the output does not continue where it was; showing the whole current window");
      }
      this.#unshown += step.skippedBytes;
      if (step.text) {
        this.#noticeUnshown();
        this.#print(step.text);
      }
      this.#totals = {
        bytes: sub.state.truncation.totalBytes,
        lines: sub.state.truncation.totalLines,
      };
      this.#showQueue(sub.end ? null : queuedAheadOf(sub.state.details));
    }
    if (sub.status !== this.#lastStatus) {
      if (!this.#progress && sub.status === "reconnecting")
        this.#notice("connection lost; reconnecting…");
      if (!this.#progress && sub.status === "live" && this.#lastStatus === "reconnecting") {
        this.#notice("reconnected");
      }
      this.#lastStatus = sub.status;
    }
    this.#explainRetries(sub);
    this.#drawProgress();
  }

  /** Says when the call starts waiting its turn and when its turn comes; the progress line keeps the place. */
  #showQueue(ahead: number | null): void {
    const was = this.#queued;
    this.#queued = ahead;
    if (this.#progress || (was === null) === (ahead === null)) return;
    this.#notice(
      ahead === null ? "its turn came: running" : `${queuedWords(ahead)} in its sandbox`,
    );
  }

  /**
   * After every few failed attempts in a row, says why the connection keeps failing,
   * so a reconnect loop is never silent (the subscription gives up on its own later).
   */
  #explainRetries(sub: Subscription): void {
    if (sub.status !== "reconnecting" || sub.attempt === this.#explainedAttempt) return;
    if (sub.attempt === 0 || sub.attempt % RETRIES_BEFORE_SAYING_WHY !== 0) return;
    this.#explainedAttempt = sub.attempt;
    const why = sub.error?.message ?? "the server closed the connection";
    this.#notice(`still reconnecting after ${sub.attempt} failed attempts: ${why}`);
  }

  /**
   * Clears the progress line, then says how it ended: truncation in words with the
   * command that prints the whole output of call `id`, and how the call ended (`ending`,
   * when it settled), timed from `startedAt` to `endedAt` (its own settledAt, when known):
   * a summary line on a terminal, a notice elsewhere unless it is done.
   */
  finish(
    outcome: SubscriptionOutcome,
    id: string,
    ending: CallEnding | null,
    endedAt: number = Date.now(),
  ): void {
    if (this.#ticker) clearInterval(this.#ticker);
    this.#clearProgress();
    const held = this.#filter?.end();
    if (held) this.#print(held, false);
    this.#noticeUnshown();
    // The text ends a line wherever it goes: a pipe or file gets the same last newline
    // as `toolwire result` prints, and no prompt lands after "(no output)".
    if (!this.#atLineStart) this.#print("\n", false);
    const banner = outcome.state
      ? describeTruncation(outcome.state.truncation, undefined, wholeOutputCommand(id))
      : null;
    if (banner) this.#notice(banner);
    if (ending === null) return;
    const took = formatElapsed(Math.max(0, endedAt - this.#startedAt));
    if (this.#progress) {
      this.#term.stderr.write(`${ending.kind === "done" ? "✔" : "✘"} ${ending.words} in ${took}\n`);
    } else if (ending.kind !== "done") this.#notice(`${ending.words} in ${took}`);
  }

  #noticeUnshown(): void {
    if (this.#unshown === 0) return;
    this.#notice(`${formatBytes(this.#unshown)} of output not shown here (outside the window)`);
    this.#unshown = 0;
  }

  /** Writes output (`filtered`: a command's text, made safe for a terminal) or our own newline. */
  #print(text: string, filtered = true): void {
    if (this.#term.stdout.isTTY) this.#clearProgress();
    const shown = filtered && this.#filter ? this.#filter.push(text) : text;
    this.#term.stdout.write(shown);
    if (shown !== "") this.#atLineStart = shown.endsWith("\n");
  }

  #notice(text: string): void {
    this.#clearProgress();
    const gap = !this.#atLineStart && this.#term.stdout.isTTY ? "\n" : "";
    this.#term.stderr.write(`${gap}[toolwire] ${text}\n`);
    if (gap) this.#atLineStart = true;
  }

  #drawProgress(): void {
    if (!this.#progress || (this.#term.stdout.isTTY && !this.#atLineStart)) return;
    const parts = [
      formatBytes(this.#totals.bytes),
      `${formatCount(this.#totals.lines)} ${this.#totals.lines === 1 ? "line" : "lines"}`,
      formatElapsed(Date.now() - this.#startedAt),
    ];
    if (this.#queued !== null) parts.push(queuedWords(this.#queued));
    if (this.#lastStatus === "reconnecting") parts.push("reconnecting…");
    if (this.#lastStatus === "connecting") parts.push("connecting…");
    const width = Math.max(20, (this.#term.stderr.columns || 80) - 1);
    this.#term.stderr.write(`${CLEAR_LINE}${parts.join(" · ").slice(0, width)}`);
    this.#progressShown = true;
  }

  #clearProgress(): void {
    if (!this.#progressShown) return;
    this.#term.stderr.write(CLEAR_LINE);
    this.#progressShown = false;
  }
}

/** The state with its text as people read it: the model's footer left out (call-story). */
function forPeople(state: ToolOutputState): ToolOutputState {
  const first = state.content[0];
  if (first?.type !== "text") return state;
  const text = withoutModelFooter(first.text);
  if (text === first.text) return state;
  return { ...state, content: [{ ...first, text }, ...state.content.slice(1)] };
}
