import type { ApiError, ErrorCode, Outcome } from "./protocol.ts";

const STATUS: Record<ErrorCode, ApiError["status"]> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  sandbox_unreachable: 502,
  not_configured: 503,
};

/** A successful outcome. @example ok({ created: true }) */
export function ok<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

/** The error a user can act on, with its HTTP status. @example apiError("conflict", "Already ended.") */
export function apiError(code: ErrorCode, message: string): ApiError {
  return { code, message, status: STATUS[code] };
}

/** A failed outcome. @example fail("bad_request", "Unknown tool \"x\".") */
export function fail<T>(code: ErrorCode, message: string): Outcome<T> {
  return { ok: false, error: apiError(code, message) };
}

/** This object holds no invocation (never started, or retired after retention). */
export function notFound<T>(): Outcome<T> {
  return fail(
    "not_found",
    "No invocation with this id (never created, or deleted after its retention period).",
  );
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
