/**
 * Errors of the invocation engine, as the MCP adapter raises them: the HTTP API's own
 * message, which the SDK turns into the tool result's error text.
 */
import type { Outcome } from "../protocol/index.ts";

/** An error from the engine (bad args, unknown sandbox, identity conflict, …). */
export class InvocationError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "InvocationError";
    this.code = code;
  }
}

/** An `InvocationError` of the adapter's own. */
export function failure(message: string): InvocationError {
  return new InvocationError("mcp", message);
}

/**
 * The value, or the engine's error thrown as an `InvocationError`.
 * @example const view = unwrapOutcome(await port.view(id))
 */
export function unwrapOutcome<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new InvocationError(outcome.error.code, outcome.error.message);
  return outcome.value;
}
