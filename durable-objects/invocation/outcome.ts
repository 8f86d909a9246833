import { type ApiError, apiError, type Outcome } from "../../src/protocol/index.ts";

/** This object holds no invocation (never started, or retired after retention). */
export const NO_INVOCATION: ApiError = apiError(
  "not_found",
  "No invocation with this id (never created, or deleted after its retention period).",
);

/** The `NO_INVOCATION` outcome of an RPC method. */
export function notFound<T>(): Outcome<T> {
  return { ok: false, error: NO_INVOCATION };
}
