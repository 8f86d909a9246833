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
 * Every subscriber was cut off on purpose by a test's control (docs/testing.md), as a
 * lost connection would be: a client reconnects and resumes after its last event.
 */
export const DROPPED_BY_TEST_CLOSE = { code: 4012, reason: "dropped by a test control" } as const;
