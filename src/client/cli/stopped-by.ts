/**
 * Which time limit stopped a bash call, from its details (`stoppedBy`), if one did.
 * @example stoppedByOf({ exitCode: null, signal: "SIGTERM", stoppedBy: "idleTimeout" }) // "idleTimeout"
 */
export function stoppedByOf(details: unknown): "timeout" | "idleTimeout" | null {
  if (typeof details !== "object" || details === null) return null;
  const by = (details as { stoppedBy?: unknown }).stoppedBy;
  return by === "timeout" || by === "idleTimeout" ? by : null;
}
