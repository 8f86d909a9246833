import { NO_INVOCATION, type Outcome } from "../../src/protocol/index.ts";

export { NO_INVOCATION };

/** The `NO_INVOCATION` outcome of an RPC method. */
export function notFound<T>(): Outcome<T> {
  return { ok: false, error: NO_INVOCATION };
}
