/**
 * How a settled call ended and what its output is, told to people the same way on every
 * face (the CLI, the viewer, the run page): "done", "failed (exit 2)", "cancelled",
 * "timed out after 600 s (timeout)" or "timed out after 30 s (idle)", the output without
 * the footer written for the model, and the one way to get the whole output
 * (decision 260). Depends on nothing but plain data.
 */

/** The limit that stopped a call, as its details name it (`stoppedBy`). */
type TimeLimit = "timeout" | "idleTimeout";

/** How a call ended, in one word a page can style by. */
type EndingKind = "done" | "failed" | "cancelled" | "timedout";

export interface CallEnding {
  kind: EndingKind;
  /** What people read: "done", "failed (exit 254)", "cancelled", "timed out after 1 s (timeout)". */
  words: string;
  /** A failed command's own exit status (1–255), when it exited with one. */
  exitCode?: number;
}

/** What `callEnding` reads of a settled call: its marks, details and args. */
interface SettledFacts {
  isError: boolean | undefined;
  cancelled: boolean | undefined;
  details: unknown;
  args: unknown;
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

/**
 * Which limit stopped a call, from its details, if one did.
 * @example stoppedByOf({ exitCode: null, stoppedBy: "idleTimeout" }) // "idleTimeout"
 */
export function stoppedByOf(details: unknown): TimeLimit | null {
  const by = field(details, "stoppedBy");
  return by === "timeout" || by === "idleTimeout" ? by : null;
}

/**
 * The phrase for a call stopped by a limit of `seconds`, the same words the sandbox
 * writes into the model's text.
 * @example timedOutWords("idleTimeout", 30) // "timed out after 30 s (idle)"
 */
export function timedOutWords(limit: TimeLimit, seconds: number | null): string {
  const after = seconds === null ? "" : ` after ${seconds} s`;
  return `timed out${after} (${limit === "timeout" ? "timeout" : "idle"})`;
}

/** The seconds of the limit the call was given, from its args. */
export function limitSeconds(args: unknown, limit: TimeLimit): number | null {
  const value = field(args, limit);
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * How a settled call ended, for people. A cancel wins over everything (its process was
 * stopped on request), then a time limit, then the tool's own failure.
 * @example callEnding({ isError: true, cancelled: false, details: { exitCode: 254 }, args: {} }).words // "failed (exit 254)"
 */
export function callEnding(facts: SettledFacts): CallEnding {
  if (facts.cancelled) return { kind: "cancelled", words: "cancelled" };
  const limit = stoppedByOf(facts.details);
  if (limit) {
    return { kind: "timedout", words: timedOutWords(limit, limitSeconds(facts.args, limit)) };
  }
  if (!facts.isError) return { kind: "done", words: "done" };
  const code = field(facts.details, "exitCode");
  const signal = field(facts.details, "signal");
  if (typeof code === "number" && code > 0 && code < 256) {
    return { kind: "failed", words: `failed (exit ${code})`, exitCode: code };
  }
  return { kind: "failed", words: typeof signal === "string" ? `failed (${signal})` : "failed" };
}

/** The lines of the model's truncation footer: where the rest is and the call that reads it. */
const FOOTER_LINE = /^\[(?:Showing |Line 1 is over |To see )[^\n]*\]$/;

/**
 * A call's text as people are shown it: without the footer written for the model (which
 * names a path inside the sandbox and a `read` call), since every page has its own
 * notice and a way to the whole output. A last line after the footer (the error the
 * call ended with) stays.
 * @example withoutModelFooter("1\n2\n\n[Showing lines 2–2 of 2. Full output: /toolwire/spill/a.log]\nCommand exited with code 1") // "1\n2\nCommand exited with code 1"
 */
export function withoutModelFooter(text: string): string {
  const lines = text.split("\n");
  let end = lines.length;
  // An error line may follow the footer; look past one line that is not a footer line.
  const last = lines[end - 1] ?? "";
  const tail = FOOTER_LINE.test(last) ? [] : [last];
  if (tail.length > 0) end--;
  let start = end;
  while (start > 0 && FOOTER_LINE.test(lines[start - 1] ?? "")) start--;
  if (start === end || !/^\[(?:Showing |Line 1 is over )/.test(lines[start] ?? "")) return text;
  // The footer starts after a blank line the tool put before it.
  const head = lines.slice(0, start);
  if (head.length > 0 && head[head.length - 1] === "") head.pop();
  const body = head.length > 0 ? `${head.join("\n")}\n` : "";
  return `${body}${tail.join("\n")}`;
}

/**
 * The command that prints a call's whole output, for a person at a terminal.
 * @example wholeOutputCommand("call_1") // "toolwire output call_1 > call_1.log"
 */
export function wholeOutputCommand(id: string): string {
  const word = /^[A-Za-z0-9._:-]+$/.test(id) ? id : `'${id.replaceAll("'", "'\\''")}'`;
  return `toolwire output ${word} > ${/^[A-Za-z0-9._-]+$/.test(id) ? id : "output"}.log`;
}
