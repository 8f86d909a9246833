/**
 * Toolwire's fold in the `details` shapes pi's built-in renderers draw (decision 134),
 * so no custom renderer is needed:
 * - `bash`, `read`, `grep`, `find`, `ls`: `truncation` is Toolwire's `Truncation` with
 *   the kept text as `content` and without `spillPath` (pi's `TruncationResult`), set
 *   only when output was cut; `fullOutputPath` is the spill path in the sandbox
 *   (bash; read and grep open it remotely).
 * - `grep`: `matchLimitReached`, `linesTruncated`; `find`: `resultLimitReached`; `ls`:
 *   `entryLimitReached` (Toolwire's own details, which carry pi's names).
 * - `edit`: `{ diff, firstChangedLine }` as Toolwire's edit reports them.
 * - `write`: nothing (pi's write has no details).
 */
import type { JsonValue, ToolOutputState, Truncation } from "../client/index.ts";

/** pi's `TruncationResult`: Toolwire's fields plus the kept text. */
export type PiTruncation = Omit<Truncation, "spillPath"> & { content: string };

/** The details one pi tool's renderer reads. */
export type PiDetails =
  | { truncation?: PiTruncation; fullOutputPath?: string }
  | { truncation?: PiTruncation; matchLimitReached?: number; linesTruncated?: boolean }
  | { truncation?: PiTruncation; resultLimitReached?: number }
  | { truncation?: PiTruncation; entryLimitReached?: number }
  | { diff: string; firstChangedLine?: number }
  | undefined;

/**
 * The details pi's renderer for `tool` reads, from a folded state or a settled result.
 * @example piDetails("edit", result) // { diff: "-1 a\n+1 b", firstChangedLine: 1 }
 */
export function piDetails(
  tool: string,
  state: Pick<ToolOutputState, "content" | "details" | "truncation">,
): PiDetails {
  const own = asObject(state.details);
  if (tool === "write") return undefined;
  if (tool === "edit") {
    if (typeof own.diff !== "string") return undefined;
    return typeof own.firstChangedLine === "number"
      ? { diff: own.diff, firstChangedLine: own.firstChangedLine }
      : { diff: own.diff };
  }
  const { spillPath, ...cut } = state.truncation;
  const text = state.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  const details: Record<string, JsonValue | PiTruncation> = {};
  if (cut.truncated) details.truncation = { ...cut, content: text };
  if (tool === "bash" && spillPath) details.fullOutputPath = spillPath;
  if (tool === "grep" && typeof own.matchLimitReached === "number") {
    details.matchLimitReached = own.matchLimitReached;
  }
  if (tool === "grep" && own.linesTruncated === true) details.linesTruncated = true;
  if (tool === "find" && typeof own.resultLimitReached === "number") {
    details.resultLimitReached = own.resultLimitReached;
  }
  if (tool === "ls" && typeof own.entryLimitReached === "number") {
    details.entryLimitReached = own.entryLimitReached;
  }
  return Object.keys(details).length > 0 ? (details as PiDetails) : undefined;
}

function asObject(value: JsonValue): Record<string, JsonValue> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}
