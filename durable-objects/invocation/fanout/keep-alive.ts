/**
 * Keep-alive on the subscriber connections (docs/decisions/071). Proxies and load
 * balancers cut connections that carry no bytes for 60-100 s; a running invocation can
 * be silent far longer than that.
 *
 * - SSE: after `SSE_KEEPALIVE_SECONDS` (default 25) without a byte on a stream, the
 *   object writes the comment line `: keep-alive` (which EventSource parsers ignore).
 * - WebSocket: the client sends `{"type":"ping"}`; the runtime answers `{"type":"pong"}`
 *   itself (`setWebSocketAutoResponse`), without waking a hibernated object.
 */

/** The SSE comment sent after a silence: a comment line and the blank line ending it. */
export const SSE_KEEPALIVE_COMMENT = ": keep-alive\n\n";

/** The WebSocket message a client sends to check the connection, byte for byte. */
export const PING_MESSAGE = '{"type":"ping"}';

/** The runtime's answer to `PING_MESSAGE`. */
export const PONG_MESSAGE = '{"type":"pong"}';
