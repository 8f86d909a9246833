/**
 * Per-call windows of `bash` (docs/decisions/170): which lines of the output the result
 * shows — the last 2,000 lines (the default), the first `head`, the last `tail`, or the
 * first `head` and the last `tail` with the omitted middle named — within a byte budget.
 *
 * The sandbox bounds the output at its source, live, as a single window (head or tail).
 * A head+tail call streams its tail window live; at the exit the head is read from the
 * start of the spill file (which holds the complete output) and put in front, with a
 * line that names the omitted middle. The footer always says how to get the rest: the
 * spill path and the exact `read` offset and line range.
 */
import { formatCount, formatSize, formatTruncationFooter } from "../core/output/footer.ts";
import { DEFAULT_OUTPUT_POLICY, type OutputPolicy, type Truncation } from "../core/output/types.ts";
import { TextWindow } from "../core/output/window.ts";
import { type ExecLimits, OUTPUT_LINES } from "../protocol/index.ts";

/** What a call asks for (all optional; none: the last 2,000 lines within 50 KiB). */
export interface WindowRequest {
  head?: number;
  tail?: number;
  maxBytes?: number;
}

/** The window a call gets: one end, or both ends with their share of the byte budget. */
export type WindowPlan =
  | { kind: "head" | "tail"; lines: number; bytes: number }
  | { kind: "headTail"; head: number; tail: number; headBytes: number; tailBytes: number };

/**
 * The plan for a request. Both ends share the byte budget in proportion to their lines.
 * @example windowPlan({ head: 100, tail: 100, maxBytes: 1000 }) // { kind: "headTail", head: 100, tail: 100, headBytes: 500, tailBytes: 500 }
 */
export function windowPlan(req: WindowRequest): WindowPlan {
  const bytes = req.maxBytes ?? DEFAULT_OUTPUT_POLICY.maxBytes;
  const { head, tail } = req;
  if (head !== undefined && tail !== undefined) {
    const headBytes = Math.floor((bytes * head) / (head + tail));
    return { kind: "headTail", head, tail, headBytes, tailBytes: bytes - headBytes };
  }
  if (head !== undefined) return { kind: "head", lines: head, bytes };
  return { kind: "tail", lines: tail ?? DEFAULT_OUTPUT_POLICY.maxLines, bytes };
}

/** What the sandbox bounds live: the one end it streams. */
export function sourceLimits(plan: WindowPlan): Required<ExecLimits> {
  if (plan.kind === "headTail") {
    return { retain: "tail", maxLines: plan.tail, maxBytes: plan.tailBytes };
  }
  return { retain: plan.kind, maxLines: plan.lines, maxBytes: plan.bytes };
}

/** Room for the line that names the omitted middle of a head+tail window. */
const MIDDLE_LINE_ROOM = { bytes: 256, lines: 2 } as const;

/**
 * The sink's bounds for a plan: the source's window plus `room` for what bash appends
 * (and, head+tail, the head and the middle line).
 */
export function sinkPolicy(plan: WindowPlan, room: { bytes: number; lines: number }): OutputPolicy {
  const source = sourceLimits(plan);
  if (plan.kind !== "headTail") {
    return {
      retain: source.retain,
      maxLines: source.maxLines + room.lines,
      maxBytes: source.maxBytes + room.bytes,
    };
  }
  return {
    retain: "tail",
    maxLines: plan.head + plan.tail + MIDDLE_LINE_ROOM.lines + room.lines,
    maxBytes: plan.headBytes + plan.tailBytes + MIDDLE_LINE_ROOM.bytes + room.bytes,
  };
}

/** Lines `from`–`to` (1-based, inclusive) of the output are not in the result. */
export interface LineRange {
  from: number;
  to: number;
}

/**
 * The lines a tail window leaves out: everything before its first whole line (the line
 * it starts inside, when it starts mid-line, is counted as left out: `read` shows it whole).
 */
export function omittedBeforeTail(t: Truncation): LineRange | null {
  if (!t.truncated) return null;
  const firstWhole = t.totalLines - t.outputLines + 1 + (t.lastLinePartial ? 1 : 0);
  const to = Math.min(t.totalLines, firstWhole - 1);
  return to >= 1 ? { from: 1, to } : null;
}

/** The lines a head window leaves out: from its first line not shown whole to the end. */
export function omittedAfterHead(t: Truncation): LineRange | null {
  if (!t.truncated) return null;
  const from = t.outputLines + 1 - (t.lastLinePartial || t.firstLineExceedsLimit ? 1 : 0);
  return from <= t.totalLines ? { from: Math.max(1, from), to: t.totalLines } : null;
}

/** Most lines one `read` call shows. */
const READ_LINES = OUTPUT_LINES;

/**
 * How to read `range` of the spill: the exact `read` call. Past 2,000 lines (what one
 * `read` shows) it says to continue from the offset read's footer gives. It also says
 * that `grep` takes the spill's path, since a grep of the workspace does not search it.
 * @example readHint("/toolwire/spill/a.log", { from: 1, to: 1000 }) // '[To see lines 1–1,000: read {"path":"/toolwire/spill/a.log","offset":1,"limit":1000}; to search it, grep {"path":"/toolwire/spill/a.log"}]'
 */
export function readHint(spillPath: string, range: LineRange): string {
  const count = range.to - range.from + 1;
  const lines =
    count === 1
      ? `line ${formatCount(range.from)}`
      : `lines ${formatCount(range.from)}–${formatCount(range.to)}`;
  const call = JSON.stringify({
    path: spillPath,
    offset: range.from,
    limit: Math.min(count, READ_LINES),
  });
  const more = count > READ_LINES ? ", then continue from the offset its footer gives" : "";
  const search = `; to search it, grep ${JSON.stringify({ path: spillPath })}`;
  return `[To see ${lines}: read ${call}${more}${search}]`;
}

/**
 * The footer of a windowed bash result: which lines are shown, of how many, where the
 * full output is, and the `read` call that shows what is not. "" when nothing was cut.
 * @example windowFooter({ kind: "tail", lines: 2000, bytes: 51200 }, meta, null)
 * // "[Showing lines 1,001–3,000 of 3,000. Full output: /toolwire/spill/a.log]\n[To see lines 1–1,000: read {…}]"
 */
export function windowFooter(plan: WindowPlan, t: Truncation, middle: LineRange | null): string {
  if (!t.truncated) return "";
  const limit = t.truncatedBy === "bytes" ? ` (${formatSize(t.maxBytes)} limit)` : "";
  let notice: string;
  let rest: LineRange | null;
  if (plan.kind === "headTail") {
    // Truncated head+tail always has a middle (joinHeadTail).
    rest = middle;
    const whole: string[] = [];
    if (middle && middle.from > 1) whole.push(`1–${formatCount(middle.from - 1)}`);
    if (middle && middle.to < t.totalLines) {
      whole.push(`${formatCount(middle.to + 1)}–${formatCount(t.totalLines)}`);
    }
    const of = `of ${formatCount(t.totalLines)}${limit}`;
    const shown =
      whole.length > 0
        ? `Showing lines ${whole.join(" and ")} ${of}`
        : `Showing no whole line ${of}`;
    notice = `[${shown}.${t.spillPath ? ` Full output: ${t.spillPath}` : ""}]`;
  } else {
    notice = formatTruncationFooter(t, { retain: plan.kind });
    rest = plan.kind === "tail" ? omittedBeforeTail(t) : omittedAfterHead(t);
  }
  return rest && t.spillPath ? `${notice}\n${readHint(t.spillPath, rest)}` : notice;
}

/** A head read from the spill and what it covers. */
interface HeadPart {
  text: string;
  /** Lines shown whole (a line cut by the byte share is shown in part and not counted). */
  wholeLines: number;
  bytes: number;
  /** Lines the text touches (whole, and one cut short). */
  lines: number;
}

/** The first line a tail window shows (in part, when it starts mid-line). */
export function tailFirstLine(t: Truncation): number {
  return t.totalLines - t.outputLines + 1;
}

/**
 * The head of a head+tail window from the first bytes of the spill: at most `lines`
 * lines and `bytes` bytes, never reaching `beforeLine` (the tail's first line), never a
 * character cut in two (an unfinished one at the end of `prefix` is left out).
 * @example headPart(new TextEncoder().encode("a\nb\nc\n"), 2, 100, 10).text // "a\nb\n"
 */
export function headPart(
  prefix: Uint8Array,
  lines: number,
  bytes: number,
  beforeLine: number,
): HeadPart {
  const maxLines = Math.max(0, Math.min(lines, beforeLine - 1));
  const window = new TextWindow({ retain: "head", maxLines, maxBytes: bytes });
  window.append(new TextDecoder().decode(prefix, { stream: true }));
  const t = window.truncation();
  const text = window.text;
  const ended = text === "" || text.endsWith("\n");
  return {
    text,
    wholeLines: ended ? t.outputLines : t.outputLines - 1,
    bytes: t.outputBytes,
    lines: t.outputLines,
  };
}

/** The spill bytes to fetch for a head of `bytes` bytes: enough to see where its last character ends. */
export function headPrefixBytes(plan: Extract<WindowPlan, { kind: "headTail" }>): number {
  return plan.headBytes + 4;
}

/**
 * A head+tail window folded: the head, a line naming the omitted middle (when one was
 * omitted), then the tail; its truncation counts both parts; and the omitted range.
 */
export function joinHeadTail(
  plan: Extract<WindowPlan, { kind: "headTail" }>,
  head: HeadPart,
  tailText: string,
  tail: Truncation,
): { text: string; truncation: Truncation; omitted: LineRange | null } {
  const beforeTail = omittedBeforeTail(tail);
  const omitted =
    beforeTail && beforeTail.to > head.wholeLines
      ? { from: head.wholeLines + 1, to: beforeTail.to }
      : null;
  let text = head.text;
  if (omitted) {
    if (text !== "" && !text.endsWith("\n")) text += "\n";
    const count = omitted.to - omitted.from + 1;
    text += `[… ${formatCount(count)} line${count === 1 ? "" : "s"} omitted (${formatCount(omitted.from)}–${formatCount(omitted.to)}) …]\n`;
  }
  text += tailText;
  const truncation: Truncation = {
    ...tail,
    truncated: omitted !== null || tail.lastLinePartial,
    outputLines: head.lines + tail.outputLines,
    outputBytes: head.bytes + tail.outputBytes,
    maxLines: plan.head + plan.tail,
    maxBytes: plan.headBytes + plan.tailBytes,
  };
  if (!truncation.truncated) truncation.truncatedBy = null;
  return { text, truncation, omitted };
}
