/**
 * What the MCP adapter needs from the rest of Toolwire, as one interface the Worker
 * implements over the invocation DO's RPC surface (start, view, progress, result, cancel) and its
 * link minting. The adapter never reaches a DO, a secret or a route by itself, so it
 * stays one more client of the same invocation engine as the HTTP API.
 */
import type {
  InputState,
  InvocationView,
  Outcome,
  OutputLines,
  ProgressPoll,
  ReadRange,
  ResultPoll,
  StartRequest,
} from "../protocol/index.ts";

/** Where a person follows an invocation live, and the token that grants it. */
export interface InvocationLinks {
  /** The live page, `…/view/<id>?token=…`. */
  viewUrl: string;
  /** Read-only token for that one invocation (1 hour). */
  subscribeToken: string;
}

/** The invocation engine as the MCP adapter sees it. */
export interface InvocationPort {
  /**
   * Validates like `POST /v1/invocations` (tool args, sandbox name, identity conflicts)
   * and creates the invocation or joins the existing one with the same id.
   * Errors carry the HTTP API's messages.
   */
  start(request: StartRequest): Promise<Outcome<{ created: boolean; view: InvocationView }>>;
  view(id: string): Promise<Outcome<InvocationView>>;
  /**
   * Waits up to `waitMs` (at most 30 s) for the invocation to settle: running, its output
   * totals and latest line (what progress sends, not the view); settled, all its answer needs.
   */
  progress(id: string, waitMs: number): Promise<Outcome<ProgressPoll>>;
  /** Waits up to `waitMs` (at most 30 s) for the invocation to settle. */
  result(id: string, waitMs: number): Promise<Outcome<ResultPoll>>;
  /** Stops a running invocation; the output it wrote is kept. `conflict` once settled. */
  cancel(id: string): Promise<Outcome<InvocationView>>;
  links(id: string): Promise<InvocationLinks>;
  /** Counts lines of `id` as given to `reader` (a background call's first moment). */
  commitRead(id: string, reader: string, range: ReadRange): Promise<Outcome<ReadRange>>;
  /** Lines `range` of a call's output, whole, from its text or its spill (job_output's bounds). */
  outputLines(view: InvocationView, range: ReadRange): Promise<OutputLines>;
  /** Where a running background call's input stands (its screen, whether it waits for input). */
  inputState(view: InvocationView): Promise<InputState | null>;
}

/**
 * Where terminated 2025-11-25 sessions are remembered (the only per-session state:
 * session ids are signed, docs/decisions/101).
 */
export interface SessionStore {
  isTerminated(sessionId: string): Promise<boolean>;
  terminate(sessionId: string): Promise<void>;
  /** Records the invocation a request named itself (`_meta` id), for a later cancel. */
  rememberCall(sessionId: string, requestId: string | number, invocationId: string): Promise<void>;
  callOf(sessionId: string, requestId: string | number): Promise<string | undefined>;
  /** Appends an SSE event (a JSON-RPC message as JSON) to a stream of the session; its number. */
  appendEvent(sessionId: string, streamId: string, message: string): Promise<number>;
  /** The session stream's events after number `seq`. */
  eventsAfter(
    sessionId: string,
    streamId: string,
    seq: number,
  ): Promise<Array<{ seq: number; message: string }>>;
}
