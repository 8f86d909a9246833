/**
 * Reaching an invocation's Durable Object. Each invocation is the DO named by its
 * `toolCallId`; taking a stub creates nothing until the DO writes storage, so asking
 * about an unknown id costs one call that answers `not_found`.
 */
import type { InvocationApi, Outcome } from "../protocol/index.ts";
import { ApiException } from "./errors.ts";

/** The DO's RPC methods (src/protocol/invocation.ts) plus `fetch` for streams. */
type InvocationStub = InvocationApi & { fetch(req: Request): Promise<Response> };

/**
 * The stub of invocation `id`.
 * @example await invocationStub(env, "call_1").view()
 */
export function invocationStub(env: Env, id: string): InvocationStub {
  // The namespace's generated stub type wraps each result in RPC helper types; the
  // protocol interface is the contract the DO class implements, so the Worker speaks it.
  return env.INVOCATIONS.getByName(id) as unknown as InvocationStub;
}

/**
 * The value of an `Outcome`, or the error it carries thrown as an `ApiException`.
 * @example const view = unwrap(await stub.view())
 */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new ApiException(outcome.error);
  return outcome.value;
}
