/**
 * The human notice under a truncated bash-like output: which lines are shown, of how many,
 * which limit cut it, and where the full output is.
 */
import type { Truncation } from "./types.ts";

/** Options for `formatTruncationFooter`. */
interface FooterOptions {
  /** Which end of the output was kept. */
  retain: "head" | "tail";
  /** False when the totals are lower bounds (the source stopped reading): no total is claimed. */
  totalsExact?: boolean;
  /** Recovery words used when there is no spill path, e.g. "Use offset=2001 to read more." */
  recovery?: string;
}

/**
 * `1234567` → `"1,234,567"`, independent of the runtime's locale data.
 * @example formatCount(32001) // "32,001"
 */
export function formatCount(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * A byte size in binary units with at most one decimal.
 * @example formatSize(51200) // "50 KB"
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KB"] : [bytes / 1024 / 1024, "MB"];
  return `${Number(value.toFixed(1))} ${unit}`;
}

/**
 * The notice for a truncated output, or `""` when nothing was cut.
 *
 * @example
 * formatTruncationFooter(t, { retain: "tail" })
 * // "[Showing lines 32,001–34,000 of 34,000 (50 KB limit). Full output: /spill/1.log]"
 */
export function formatTruncationFooter(t: Truncation, options: FooterOptions): string {
  if (!t.truncated) return "";
  const exact = options.totalsExact !== false;
  const limit = t.truncatedBy === "bytes" ? ` (${formatSize(t.maxBytes)} limit)` : "";
  let shown: string;
  if (options.retain === "tail") {
    if (t.lastLinePartial) {
      const line = exact ? ` of line ${formatCount(t.totalLines)}` : " of the last line";
      shown = `Showing the last ${formatSize(t.outputBytes)}${line}${limit}`;
    } else if (t.outputLines === 0) {
      shown = `Showing no lines${limit}`;
    } else if (exact) {
      const first = t.totalLines - t.outputLines + 1;
      shown = `Showing lines ${formatCount(first)}–${formatCount(t.totalLines)} of ${formatCount(t.totalLines)}${limit}`;
    } else {
      shown = `Showing the last ${formatCount(t.outputLines)} lines${limit}`;
    }
  } else if (t.firstLineExceedsLimit) {
    shown = `Line 1 is over the ${formatSize(t.maxBytes)} limit; showing its first ${formatSize(t.outputBytes)}`;
  } else if (t.outputLines === 0) {
    shown = `Showing no lines${limit}`;
  } else {
    const of = exact ? ` of ${formatCount(t.totalLines)}` : "";
    const cut = t.lastLinePartial ? `; line ${formatCount(t.outputLines)} is cut short` : "";
    shown = `Showing lines 1–${formatCount(t.outputLines)}${of}${limit}${cut}`;
  }
  const recovery = t.spillPath
    ? ` Full output: ${t.spillPath}`
    : options.recovery
      ? ` ${options.recovery}`
      : "";
  return `[${shown}.${recovery}]`;
}
