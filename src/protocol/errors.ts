/**
 * The one vocabulary of refusals: every code the HTTP API answers with, the status that
 * goes with it, and the message of anything thrown. The Worker, the Durable Object and
 * the client all speak it (docs/protocol.md#errors).
 */

/** Every error code the Toolwire API answers with. */
export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "gone"
  | "too_large"
  | "too_many_requests"
  | "insufficient_storage"
  | "range_not_satisfiable"
  | "upgrade_required"
  | "internal"
  | "busy"
  | "sandbox_unreachable"
  | "no_listener"
  | "not_configured";

const STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  too_large: 413,
  too_many_requests: 429,
  insufficient_storage: 507,
  range_not_satisfiable: 416,
  upgrade_required: 426,
  internal: 500,
  sandbox_unreachable: 502,
  // A preview URL's port has nothing listening in its sandbox (docs/sandboxes.md).
  no_listener: 502,
  // The sandbox host runs as many commands as it may; `Retry-After` says when to come back.
  busy: 503,
  not_configured: 503,
} as const satisfies Record<ErrorCode, number>;

/** The HTTP status of each code. */
export type ErrorStatus = (typeof STATUS)[ErrorCode];

/** A refusal a user can act on: what was wrong and what to do, with its HTTP status. */
export interface ApiError {
  code: ErrorCode;
  message: string;
  /** HTTP status the Worker answers with. */
  status: ErrorStatus;
  /** Seconds to wait before retrying, answered as `Retry-After` (a full queue, decision 248). */
  retryAfterSec?: number;
}

/**
 * The error for `code`, with the status its code implies.
 * @example apiError("conflict", "Already ended.") // { code: "conflict", message, status: 409 }
 */
export function apiError(code: ErrorCode, message: string, retryAfterSec?: number): ApiError {
  const error: ApiError = { code, message, status: STATUS[code] };
  if (retryAfterSec !== undefined) error.retryAfterSec = retryAfterSec;
  return error;
}

/**
 * The JSON response for an error: `{ "error": { "code", "message" } }`, uncached.
 * `extraHeaders` carries e.g. `Allow`, `Upgrade` or `WWW-Authenticate`.
 * @example errorResponse(apiError("conflict", "already settled"))
 */
export function errorResponse(
  error: ApiError,
  extraHeaders: Record<string, string> = {},
): Response {
  const retry: Record<string, string> =
    error.retryAfterSec === undefined ? {} : { "Retry-After": String(error.retryAfterSec) };
  return Response.json(
    { error: { code: error.code, message: error.message } },
    { status: error.status, headers: { "Cache-Control": "no-store", ...retry, ...extraHeaders } },
  );
}

/**
 * The message of an error answer's body in the API's shape (`{ "error": { "message" } }`),
 * or null when the body is not one (the caller says what it got instead).
 * @example errorBodyMessage('{"error":{"code":"not_found","message":"no such call"}}') // "no such call"
 */
export function errorBodyMessage(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } } | null;
    if (typeof parsed?.error?.message === "string") return parsed.error.message;
  } catch {}
  return null;
}
