/**
 * The contract between the Worker (src/worker) and the InvocationDO: the RPC methods
 * the Worker calls and the values they return. The DO never throws for a user's
 * mistake; it returns an `Outcome` whose error the Worker turns into HTTP.
 */
import type { JsonValue } from "../src/chord/types.ts";
import type {
  ProducerCall,
  ProducerEnd,
  SettledResult,
  ToolOutputState,
} from "../src/output/types.ts";

export type { ProducerCall, ProducerEnd };

export interface StartRequest {
  tool: string;
  /** Already validated against the tool's schema by the Worker. */
  args: JsonValue;
  toolCallId: string;
  runId: string;
  turnId: string;
  sandbox: string;
}

export type InvocationStatus = "running" | "settled";

export interface InvocationView {
  id: string;
  tool: string;
  args: JsonValue;
  runId: string;
  turnId: string;
  /** The sandbox the call was created for (`"default"` when the request named none). */
  sandbox: string;
  status: InvocationStatus;
  state: ToolOutputState;
  isError?: boolean;
  cancelled?: boolean;
  createdAt: number;
  settledAt?: number;
}

export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "sandbox_unreachable"
  | "not_configured";

export interface ApiError {
  code: ErrorCode;
  message: string;
  /** HTTP status the Worker answers with. */
  status: 400 | 401 | 403 | 404 | 409 | 413 | 502 | 503;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export type ResultPoll = { status: "settled"; result: SettledResult } | { status: "running" };

/**
 * RPC surface of `InvocationDO` (the DO class implements this). WebSocket and SSE
 * subscriptions go through `fetch` with paths `/socket` and `/events`; the Worker has
 * already checked the subscribe token.
 */
export interface InvocationApi {
  /** Creates and starts the invocation, or returns the existing one (`created: false`). */
  start(req: StartRequest): Promise<Outcome<{ created: boolean; view: InvocationView }>>;
  /** Current view; `not_found` if this DO holds no invocation. */
  view(): Promise<Outcome<InvocationView>>;
  /** Waits up to `waitMs` for the invocation to settle. */
  result(waitMs: number): Promise<Outcome<ResultPoll>>;
  /** Aborts a running invocation; `conflict` once settled. */
  cancel(): Promise<Outcome<InvocationView>>;
  /**
   * Producer API: applies all calls atomically (all or none), then `end` if given. With
   * `seq` (0, 1, 2, … per body) a retry of the last accepted body is answered again and
   * not applied; any other seq than the next is `conflict`.
   */
  produce(calls: ProducerCall[], end?: ProducerEnd, seq?: number): Promise<Outcome<InvocationView>>;
}
