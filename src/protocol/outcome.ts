import { type ApiError, apiError, type ErrorCode } from "./errors.ts";

/**
 * What an RPC method of the Durable Object returns: a value, or the refusal the Worker
 * answers with. The DO never throws for a user's mistake.
 */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** A successful outcome. @example ok({ created: true }) */
export function ok<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

/**
 * An outcome that refuses, with the error a user can act on (and, for a refusal that
 * passes, the seconds to wait before retrying: `Retry-After`).
 * @example refusal("bad_request", 'Unknown tool "x".')
 */
export function refusal<T>(code: ErrorCode, message: string, retryAfterSec?: number): Outcome<T> {
  return { ok: false, error: apiError(code, message, retryAfterSec) };
}
