/**
 * Checks that a budget option is a non-negative integer and returns it.
 * @example assertBudget("TextRetainer", "maxBytes", 51200) // 51200
 */
export function assertBudget(owner: string, option: string, value: unknown): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
  throw new RangeError(
    `${owner}: ${option} must be a non-negative integer (0 keeps nothing), got ${shown}.`,
  );
}
