/**
 * The one error shape of the HTTP API: `{ "error": { "code", "message" } }` with the
 * status that goes with the code (src/protocol). Helpers throw `ApiException` with
 * `raise`; the app's error handler turns it into a response, so no route builds an error
 * body by hand.
 */
import { type ApiError, apiError, type ErrorCode } from "../protocol/index.ts";

export { errorResponse } from "../protocol/index.ts";

/** Thrown by validation and auth helpers; answered as the error it carries. */
export class ApiException extends Error {
  readonly error: ApiError;
  /** Headers the answer carries besides the body (`Allow`, `Upgrade`, `WWW-Authenticate`). */
  readonly headers: Record<string, string>;
  constructor(error: ApiError, headers: Record<string, string> = {}) {
    super(error.message);
    this.name = "ApiException";
    this.error = error;
    this.headers = headers;
  }
}

/**
 * Throws an `ApiException` for `code`.
 * @example raise("bad_request", "body.tool: unknown tool \"nope\"")
 */
export function raise(code: ErrorCode, message: string, headers?: Record<string, string>): never {
  throw new ApiException(apiError(code, message), headers);
}
