/**
 * Durations as people type them on a command line or in an environment variable:
 * `90` or `90s` (seconds), `15m`, `2h`, `7d`. One rule for `toolwire sandbox create
 * --idle` and the pi extension's `TOOLWIRE_SANDBOX_IDLE`.
 */

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Whole seconds of `text`, or null when it is not a positive duration.
 * @example durationSeconds("15m") // 900
 * @example durationSeconds("90") // 90
 */
export function durationSeconds(text: string): number | null {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!match) return null;
  const seconds = Number(match[1]) * (UNIT_SECONDS[match[2] || "s"] ?? 1);
  return seconds > 0 ? seconds : null;
}
