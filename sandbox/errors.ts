/**
 * Errors the sandbox host answers with. Every refusal is a value a caller can act on:
 * a status, a stable code and a message that says what was wrong and what to do.
 */
export type SandboxErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "too_many_requests"
  | "insufficient_storage"
  | "busy"
  | "internal";

export type SandboxErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503 | 507;

/**
 * A refusal with its HTTP status.
 * @example throw new SandboxError(404, "not_found", "no exec named abc; it may have expired");
 */
export class SandboxError extends Error {
  readonly status: SandboxErrorStatus;
  readonly code: SandboxErrorCode;
  /** Seconds for a `Retry-After` header (a 503 `busy`). */
  readonly retryAfterSec: number | undefined;

  constructor(
    status: SandboxErrorStatus,
    code: SandboxErrorCode,
    message: string,
    retryAfterSec?: number,
  ) {
    super(message);
    this.name = "SandboxError";
    this.status = status;
    this.code = code;
    this.retryAfterSec = retryAfterSec;
  }
}

/** JSON body of an error response: `{ error: { code, message } }`, as the Worker answers. */
export function errorBody(err: SandboxError): { error: { code: string; message: string } } {
  return { error: { code: err.code, message: err.message } };
}
