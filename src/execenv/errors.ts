/**
 * Why a sandbox call failed, as values the Durable Object can act on: retry
 * (`SandboxUnreachableError`, `SandboxStreamError`) or report (`SandboxHttpError`).
 */

/** The sandbox could not be reached (connection refused, DNS, TLS, reset before an answer). */
export class SandboxUnreachableError extends Error {
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(
      `sandbox at ${url} is unreachable (${cause instanceof Error ? cause.message : String(cause)}); check that the sandbox host is running and SANDBOXES points at it`,
      { cause },
    );
    this.name = "SandboxUnreachableError";
    this.url = url;
  }
}

/**
 * The error code a `container` sandbox's container DO answers with (a 404) once its
 * container has stopped: the sandbox, its files and its commands are gone.
 */
export const CONTAINER_STOPPED = "container_stopped";

/** The sandbox answered with an error status; `code` and `message` come from its body. */
export class SandboxHttpError extends Error {
  readonly status: number;
  readonly code: string;
  /** The host's own message, without the status prefix (what a tool shows the model). */
  readonly reason: string;

  constructor(status: number, code: string, message: string) {
    super(`sandbox refused the request (${status} ${code}): ${message}`);
    this.name = "SandboxHttpError";
    this.status = status;
    this.code = code;
    this.reason = message;
  }
}

/** An exec stream broke off before its `exit` line, or carried a malformed line. Reattach to resume. */
export class SandboxStreamError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "SandboxStreamError";
  }
}
