/**
 * Close codes the server ends an event socket with, beside 1000 ("settled"), and what
 * a client does on each. Codes 4000–4999 are the application's own (RFC 6455 §7.4.2).
 */

/**
 * The subscribe token the socket was opened with has expired: the socket is closed at
 * the first event after its expiry, and reconnecting with the same token is refused.
 * A client stops and asks for a fresh link (docs/decisions/112).
 */
export const TOKEN_EXPIRED_CLOSE = { code: 4401, reason: "subscribe token expired" } as const;

/**
 * The sandbox token the socket was opened with no longer holds: it was revoked (a newer
 * one was made) or its sandbox ended. The object checks at each heartbeat of a running
 * call, so the socket closes within one heartbeat of the revocation; reconnecting with
 * the same token is refused (docs/decisions/253).
 */
export const CREDENTIAL_REVOKED_CLOSE = { code: 4403, reason: "sandbox token revoked" } as const;

/**
 * Every subscriber was cut off on purpose by a test's control (docs/testing.md), as a
 * lost connection would be: a client reconnects and resumes after its last event.
 */
export const DROPPED_BY_TEST_CLOSE = { code: 4012, reason: "dropped by a test control" } as const;
