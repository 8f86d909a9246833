/**
 * Durations read from string settings (wrangler vars such as
 * `EXTERNAL_IDLE_TIMEOUT_SECONDS`): one rule for every one of them.
 */

/**
 * Milliseconds of a setting given in `unitMs` units (seconds by default). A missing,
 * non-numeric or negative value falls back to `fallback` units; so does zero unless
 * `allowZero`. Fractions are kept (rounded to whole milliseconds).
 * @example durationMs("60", 1800) // 60_000
 * @example durationMs("0", 1800) // 1_800_000
 * @example durationMs("2", 7, { unitMs: 86_400_000, allowZero: true }) // 172_800_000
 */
export function durationMs(
  raw: string | undefined,
  fallback: number,
  options: { unitMs?: number; allowZero?: boolean } = {},
): number {
  const value = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  const valid = Number.isFinite(value) && (value > 0 || (value === 0 && options.allowZero));
  return Math.round((valid ? value : fallback) * (options.unitMs ?? 1000));
}
