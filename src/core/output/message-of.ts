/**
 * The message of anything thrown: an `Error`'s message (its name when the message is
 * empty), a string as it is, anything else as JSON. In the core so the sink's notices and
 * the protocol's errors (which re-exports it) say the same thing.
 * @example messageOf(new TypeError("bad")) // "bad"
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
