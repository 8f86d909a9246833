/**
 * A duration as the pages show it: tenths of a second under a minute, then `m:ss`, then
 * `h:mm:ss`: one format on every face (the viewer's clock, the run page, the CLI).
 * @example formatElapsed(75_000) // "1:15"
 */
export function formatElapsed(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.floor(seconds);
  const m = Math.floor(whole / 60);
  const h = Math.floor(m / 60);
  const ss = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m % 60).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}
