import type { ToolwireError } from "./errors.ts";

/** What a transport reports about one connection. */
export interface TransportHandlers {
  /** One event frame: JSON text of a harness event. */
  message(text: string): void;
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

/** Opens one connection to an invocation's event stream. */
export type Transport = (handlers: TransportHandlers) => TransportConnection;
