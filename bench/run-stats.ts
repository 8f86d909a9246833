/**
 * What the whole-process benches print beside their timings: the median of repeated
 * runs and the machine's load average (the machine is shared, so every table says it).
 */
import { loadavg } from "node:os";

/**
 * The median of `values` (the mean of the middle two for an even count).
 * @example median([3, 1, 2]) // 2
 */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The 1, 5 and 15 minute load averages, two decimals each.
 * @example load() // "0.35 1.23 2.92"
 */
export function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}
