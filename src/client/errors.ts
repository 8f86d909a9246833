import type { ErrorCode } from "../protocol/index.ts";

/** Error codes the API answers with (docs/protocol.md#errors), as the server defines them. */
export type ApiErrorCode = ErrorCode;

/**
 * Codes raised by the client itself: the server could not be reached, it answered
 * something that is not the Toolwire API, a live stream could not be folded (the
 * client asks for a fresh base), or a subscription gave up reconnecting.
 */
export type ClientErrorCode = "unreachable" | "bad_response" | "out_of_sync" | "gave_up";

/** Known codes, plus any other code a newer server sends. */
export type ToolwireErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

/**
 * Every failure of the client is a `ToolwireError`: `code` to branch on, `message`
 * to show a person, `status` the HTTP status (0 when there was no answer).
 *
 * @example
 * try { await client.get("nope") } catch (e) {
 *   if (e instanceof ToolwireError && e.code === "not_found") console.log(e.message);
 * }
 */
export class ToolwireError extends Error {
  readonly code: ToolwireErrorCode;
  readonly status: number;

  constructor(code: ToolwireErrorCode, message: string, status: number) {
    super(message);
    this.name = "ToolwireError";
    this.code = code;
    this.status = status;
  }

  /** Auth, not-found, bad-input and not-Toolwire answers will not change by retrying. */
  get permanent(): boolean {
    if (this.code === "bad_response") return this.status < 500;
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

/**
 * Turns a non-2xx HTTP answer into a `ToolwireError`, using the API's
 * `{ error: { code, message } }` body when there is one.
 */
export async function errorFromResponse(res: Response, what: string): Promise<ToolwireError> {
  const text = await res.text().catch(() => "");
  const body = parseJson(text);
  const apiError = isRecord(body) && isRecord(body.error) ? body.error : null;
  if (apiError && typeof apiError.code === "string" && typeof apiError.message === "string") {
    return new ToolwireError(apiError.code, apiError.message, res.status);
  }
  // The Toolwire API always explains its errors; anything else is another server.
  return new ToolwireError(
    "bad_response",
    `${what} failed: ${res.url || "the server"} answered HTTP ${res.status} without a Toolwire error body. Is this the Toolwire URL?`,
    res.status,
  );
}

/** A fetch that never reached the server (DNS, refused connection, TLS). */
export function unreachable(url: string, cause: unknown): ToolwireError {
  const detail = cause instanceof Error ? (causeMessage(cause) ?? cause.message) : String(cause);
  return new ToolwireError(
    "unreachable",
    `Could not reach Toolwire at ${url} (${detail}). Is the server running at that address?`,
    0,
  );
}

function causeMessage(error: Error): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
