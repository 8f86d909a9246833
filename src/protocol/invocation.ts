/**
 * The contract between the Worker and the Invocation Durable Object: the RPC methods the
 * Worker calls and the values they return (the DO class implements `InvocationApi`).
 */
import type { JsonValue } from "../core/chord/index.ts";
import type {
  ProducerCall,
  ProducerEnd,
  SettledResult,
  ToolOutputState,
} from "../core/output/index.ts";
import { type ApiError, apiError } from "./errors.ts";
import type { Outcome } from "./outcome.ts";
import type { ExecLoad } from "./sandbox-wire.ts";
import type { HeldSize, TypedInput } from "./terminal-input.ts";

/**
 * Invocation ids are the `toolCallId`: URL-safe, 1-128 characters, starting with a
 * letter or digit (docs/decisions/050). HTTP, MCP and the job tools check the same rule.
 */
export const INVOCATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export type { ProducerCall, ProducerEnd };

export interface StartRequest {
  tool: string;
  /** Already validated against the tool's schema by the Worker. */
  args: JsonValue;
  /**
   * What the tool's `parse` made of `args`, from the edge that received them (the HTTP
   * route, MCP's schema check), so the DO does not parse them again. Without it, the
   * DO's RPC is the edge and parses `args` itself.
   */
  params?: unknown;
  toolCallId: string;
  runId: string;
  turnId: string;
  sandbox: string;
  /**
   * How busy the sandbox's commands were as its host said a moment ago, where the Worker
   * has just asked it (a created sandbox's use, decision 258): the DO admits the call by
   * it and does not probe the host again. Absent: the DO probes (`GET /healthz`).
   */
  hostLoad?: ExecLoad;
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

/**
 * A running invocation's progress, small enough to read every second: its output's
 * totals and latest line (cut to 120 units), not the state that holds up to 50 KB.
 */
export interface ProgressRead {
  /** Output bytes so far (the state's `truncation.totalBytes`). */
  bytes: number;
  /** Output lines so far (`truncation.totalLines`). */
  lines: number;
  /** The last non-empty line of the retained text, trimmed and cut with "…". */
  lastLine: string;
}

/**
 * What a watching call reads every second: its progress while running, and once
 * settled everything its answer needs, so a settled call reads nothing more.
 */
export type ProgressPoll =
  | { status: "settled"; result: SettledResult; cancelled: boolean }
  | ({ status: "running" } & ProgressRead);

/** Output lines `from`–`to` (1-based, inclusive; empty when `to` is `from - 1`). */
export interface ReadRange {
  from: number;
  to: number;
}

/** Lines of a call's output as a reader is given them, and the range they are. */
export interface OutputLines {
  lines: string[];
  range: ReadRange;
}

/**
 * What `bash { background: true }` answers with after its first moment (HTTP
 * `firstMoment`): what the command printed, the lines of it counted as read (the first
 * `job_output` gives the lines after them), and the sentence that says how to follow it.
 */
export interface FirstMomentAnswer {
  text: string;
  shown: ReadRange | null;
  note: string;
}

/** Where a reader of an invocation's output stands: what it was given, and what is next. */
export interface ReadCursor {
  /** The first line no reader has been given yet. */
  next: number;
  /** The range this reader was given already (it asked before). */
  given?: ReadRange;
}

export type ResultPoll = { status: "settled"; result: SettledResult } | { status: "running" };

/** Subscription paths of the DO's `fetch`; it answers 404 itself for an unknown invocation. */
export type SubscriptionPath = "/socket" | "/events";

/**
 * What an invocation's DO answers when it holds none (never started, or retired after
 * retention); a call out of a confined caller's scope answers the same (decision 251).
 */
export const NO_INVOCATION: ApiError = apiError(
  "not_found",
  "No invocation with this id (never created, or deleted after its retention period).",
);

/**
 * RPC surface of `InvocationDO`. WebSocket and SSE subscriptions go through `fetch` with
 * a `SubscriptionPath`; the Worker has already checked the subscribe token.
 */
export interface InvocationApi {
  /** Creates and starts the invocation, or returns the existing one (`created: false`). */
  start(req: StartRequest): Promise<Outcome<{ created: boolean; view: InvocationView }>>;
  /** Current view; `not_found` if this DO holds no invocation. */
  view(): Promise<Outcome<InvocationView>>;
  /**
   * Waits up to `waitMs` for the invocation to settle, like `result`; running, its output
   * totals and latest line, settled, its result and whether it was cancelled.
   */
  progress(waitMs: number): Promise<Outcome<ProgressPoll>>;
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
  /** Where `reader` (a job_output call's toolCallId) stands in this output. */
  readCursor(reader: string): Promise<Outcome<ReadCursor>>;
  /** Gives `reader` a range (its own again if it asked before); `conflict` if it is not next. */
  commitRead(reader: string, range: ReadRange): Promise<Outcome<ReadRange>>;
  /**
   * Records an input typed into this running tty call's terminal (decision 191): its
   * `details.lastInput` names who, and a person's input waits for the model's next read.
   */
  noteInput(input: TypedInput): Promise<Outcome<null>>;
  /**
   * Records the size a person holds this running tty call's terminal at, or (null) that
   * it has its own again: `details.terminalSize` (decision 193).
   */
  noteSize(size: HeldSize | null): Promise<Outcome<null>>;
  /**
   * People's inputs since the last model read, given to `reader` (a job_output or
   * write_stdin call's toolCallId) once; the same reader asking again gets the same ones.
   */
  typedSince(reader: string): Promise<Outcome<TypedInput[]>>;
}

/**
 * What a test may do to an invocation's Durable Object, through routes that exist only
 * where the Worker's `TEST_CONTROLS` setting is on (docs/testing.md).
 */
export interface InvocationTestControls {
  /** Cuts every subscriber off as a lost connection would; answers how many. */
  dropSubscribers(): number;
  /** Throws the instance away as an eviction does; the call itself fails. */
  evict(): void;
}
