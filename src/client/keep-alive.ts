/**
 * How a connection proves it is alive. A socket or stream that silently stopped (a
 * NAT or proxy dropped it, a laptop slept) never reports a close; without these the
 * view would wait forever. See docs/decisions/063-client-keep-alive.md.
 */
export interface KeepAlivePolicy {
  /** WebSocket: send `{"type":"ping"}` this often (the server answers `{"type":"pong"}`). */
  pingEveryMs: number;
  /** WebSocket: no frame at all this long after a ping means the connection is dead. */
  pongWithinMs: number;
  /** SSE: no bytes at all this long means the stream is dead (the server sends a comment every ~25 s). */
  sseQuietMs: number;
}

/** The wire contract's numbers (shared with the Durable Object's side). */
export const DEFAULT_KEEP_ALIVE: KeepAlivePolicy = {
  pingEveryMs: 20_000,
  pongWithinMs: 45_000,
  sseQuietMs: 60_000,
};

/** The text frame a client sends, and the one the server answers with; neither is an event. */
export const PING_FRAME = '{"type":"ping"}';
export const PONG_FRAME = '{"type":"pong"}';

/** "45 s", "1.5 s": intervals in the words of an error message. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
