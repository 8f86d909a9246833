/**
 * The one error shape of the HTTP API: `{ "error": { "code", "message" } }` with the
 * status that goes with the code. Helpers throw `ApiException`; the app's error handler
 * turns it into a response, so a route never builds an error body by hand.
 */
import { apiError } from "../../durable-objects/outcome.ts";
import type { ApiError, ErrorCode } from "../../durable-objects/protocol.ts";

/** An `ApiError` with the status its code implies (one table, shared with the DO). */
export { apiError };

/** Thrown by validation and auth helpers; answered as the error it carries. */
export class ApiException extends Error {
  readonly error: ApiError;
  constructor(error: ApiError) {
    super(error.message);
    this.name = "ApiException";
    this.error = error;
  }
}

/**
 * Throws an `ApiException` for `code`.
 * @example fail("bad_request", "body.tool: unknown tool \"nope\"")
 */
export function fail(code: ErrorCode, message: string): never {
  throw new ApiException(apiError(code, message));
}

/**
 * The JSON response for an error. `extraHeaders` carries e.g. `Allow` or `WWW-Authenticate`.
 * @example errorResponse(apiError("conflict", "already settled"))
 */
export function errorResponse(
  error: { code: string; message: string; status: number },
  extraHeaders: Record<string, string> = {},
): Response {
  return Response.json(
    { error: { code: error.code, message: error.message } },
    { status: error.status, headers: { "Cache-Control": "no-store", ...extraHeaders } },
  );
}
