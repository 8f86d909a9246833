/** A whole number from the host's environment, at least `least`. */
function envInt(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  least: 0 | 1,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < least) {
    const what = least === 1 ? "a positive whole number" : "a whole number from 0";
    throw new Error(`${name} must be ${what}, got '${raw}'`);
  }
  return value;
}

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
  return envInt(env, name, fallback, 1);
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
  return envInt(env, name, fallback, 0);
}
