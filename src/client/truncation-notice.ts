import { formatCount } from "../core/output/footer.ts";
import type { Truncation } from "../core/output/types.ts";

const integer = new Intl.NumberFormat("en-US");

/** 51200 → "50 KB", 1536 → "1.5 KB", 12 → "12 bytes" (1 KB = 1024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? "1 byte" : `${integer.format(bytes)} bytes`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = value >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${integer.format(shown)} ${units[unit]}`;
}

/**
 * The truncation banner in plain words, or `null` when nothing was cut.
 * `retain` says which end was kept when the caller knows it ("tail" for a rolling
 * window, "head" for a capped start); without it the words do not guess. `whole` is how
 * a person gets the whole output (a command); without it the banner names the spill path.
 *
 * @example
 * describeTruncation({ truncated: true, truncatedBy: "bytes", totalLines: 34567,
 *   outputLines: 2000, maxBytes: 51200, spillPath: "/toolwire/spill/x.log", ... }, "tail")
 * // "Showing the last 2,000 of 34,567 lines (50 KB limit). Full output: /toolwire/spill/x.log"
 */
export function describeTruncation(
  t: Truncation,
  retain?: "head" | "tail",
  whole?: string,
): string | null {
  if (!t.truncated) return null;
  const which = retain === "tail" ? "the last " : retain === "head" ? "the first " : "";
  const limit =
    t.truncatedBy === "lines"
      ? `${formatCount(t.maxLines)}-line limit`
      : `${formatBytes(t.maxBytes)} limit`;
  const shown = t.firstLineExceedsLimit
    ? `Showing ${which}${formatBytes(t.outputBytes)} of ${formatBytes(t.totalBytes)} (a single line is longer than the ${limit})`
    : `Showing ${which}${formatCount(t.outputLines)} of ${formatCount(t.totalLines)} lines (${limit})`;
  if (whole && t.spillPath) return `${shown}. The whole output: ${whole}`;
  return t.spillPath ? `${shown}. Full output: ${t.spillPath}` : `${shown}.`;
}
