/**
 * Errors the sandbox host answers with. Every refusal is a value a caller can act on:
 * a status, a stable code and a message that says what was wrong and what to do.
 */
import { apiError, type ErrorCode, type ErrorStatus } from "../src/protocol/index.ts";

/** The sandbox host speaks the API's one vocabulary of codes (src/protocol/errors.ts). */
type SandboxErrorCode = ErrorCode;

/**
 * A refusal with its HTTP status.
 * @example throw new SandboxError("not_found", "no exec named abc; it may have expired");
 */
export class SandboxError extends Error {
  readonly status: ErrorStatus;
  readonly code: SandboxErrorCode;
  /** Seconds for a `Retry-After` header (a 503 `busy`, a 429 of a full host). */
  readonly retryAfterSec: number | undefined;

  constructor(code: SandboxErrorCode, message: string, retryAfterSec?: number) {
    super(message);
    this.name = "SandboxError";
    this.status = apiError(code, message).status;
    this.code = code;
    this.retryAfterSec = retryAfterSec;
  }
}

/** JSON body of an error response: `{ error: { code, message } }`, as the Worker answers. */
export function errorBody(err: SandboxError): { error: { code: string; message: string } } {
  return { error: { code: err.code, message: err.message } };
}

/**
 * The answer to an error no route expected (decision 247): one failing request, in
 * words without a host path or a stack (those go to the host's log), naming the system
 * error code when there is one.
 * @example app.onError((err, c) => { const e = err instanceof SandboxError ? err : internalError(err, c.req.path); … })
 */
export function internalError(err: unknown, route: string): SandboxError {
  console.error(`sandbox host: ${route} failed:`, err);
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const which = typeof code === "string" && /^[A-Z0-9_]{2,32}$/.test(code) ? ` (${code})` : "";
  return new SandboxError(
    "internal",
    `the sandbox host failed on this request${which}; nothing else was affected, and the host's log has the detail`,
  );
}
