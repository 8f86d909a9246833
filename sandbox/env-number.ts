/**
 * A positive whole number from the host's environment: `fallback` when `name` is unset or
 * empty, else the value, or an error that names the setting and what it got.
 * @example positiveInt(process.env, "SANDBOX_MAX_EXECS", 4)
 */
export function positiveInt(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive whole number, got '${raw}'`);
  }
  return value;
}
