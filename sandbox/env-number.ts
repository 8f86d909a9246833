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

/**
 * A whole number from 0 (0 turns a feature off): `fallback` when `name` is unset or
 * empty, else the value, or an error that names the setting and what it got.
 * @example wholeNumber(process.env, "SANDBOX_POOL_SIZE", 4)
 */
export function wholeNumber(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a whole number from 0, got '${raw}'`);
  }
  return value;
}
