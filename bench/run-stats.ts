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

/**
 * The nearest-rank `p`th percentile of `values`.
 * @example percentile([5, 1, 4, 2, 3], 95) // 5
 */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * ComputeSDK benchmarks, 2026-04, 100 runs, create to first command: median / p95
 * seconds (issue 29's table), printed beside Toolwire's own figures.
 */
export const PUBLISHED: [string, number, number][] = [
  ["Daytona", 0.11, 0.28],
  ["E2B", 0.44, 0.85],
  ["Cloudflare Sandbox", 1.72, 2.48],
  ["Vercel", 1.75, 1.93],
  ["Modal", 2.66, 11.78],
];
