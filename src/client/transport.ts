import type { ToolwireError } from "./errors.ts";

/** What a transport reports about one connection. */
export interface TransportHandlers {
  /** One event frame: JSON text of a harness event; `id` its SSE event id, if any. */
  message(text: string, id?: string): void;
  /**
   * The connection is over (called once, never after `close()` was called on it).
   * A permanent `error` (auth, not found) means reconnecting would not help.
   */
  closed(error?: ToolwireError): void;
}

/** One live connection. */
export interface TransportConnection {
  /** Ask the server for a fresh base batch on this connection; false if this transport cannot. */
  resync(): boolean;
  close(): void;
}

/**
 * Where a new connection picks up: after the storage seq of the last update the client
 * folded (docs/decisions/111). The server then sends the batches after it, or a base
 * when its log no longer has them.
 */
export interface ResumePoint {
  after: number;
}

/** Opens one connection to an invocation's event stream, resuming after `resume` when given. */
export type Transport = (handlers: TransportHandlers, resume?: ResumePoint) => TransportConnection;
