/**
 * The RPC surface of `McpSessionDO` (docs/decisions/101, 107): what an MCP 2025-11-25
 * session remembers, as the Worker's `/mcp` route calls it.
 */
export interface McpSessionApi {
  isTerminated(): Promise<boolean>;
  /** Marks it terminated and removes the sandbox it owns, if it owns one. */
  terminate(): Promise<void>;
  /** Records the sandbox made for this session (`/mcp/sandbox/new`, decision 222). */
  ownSandbox(sandboxId: string): Promise<void>;
  /** The sandbox made for this session, or null when it was not opened on `/mcp/sandbox/new`. */
  sandbox(): Promise<string | null>;
  /** Records that JSON-RPC request `requestId` of this session is invocation `invocationId`. */
  rememberCall(requestId: string | number, invocationId: string): Promise<void>;
  callOf(requestId: string | number): Promise<string | null>;
  /** Appends one SSE event (a JSON-RPC message, as JSON) to stream `streamId`; its number. */
  appendEvent(streamId: string, message: string): Promise<number>;
  /** The events of stream `streamId` after number `seq`, in order. */
  eventsAfter(streamId: string, seq: number): Promise<Array<{ seq: number; message: string }>>;
}
