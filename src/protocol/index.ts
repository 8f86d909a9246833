/**
 * The protocol shared by Toolwire's adapters (the Worker, the Invocation Durable Object,
 * the sandbox host and its client, the client): error codes, `Outcome`, the invocation
 * RPC contract, the sandbox host's HTTP vocabulary, bearer tokens and duration settings.
 *
 * Depends on the pure core only (src/core/chord, src/core/output, src/core/retention, src/core/events);
 * test/node/layers.test.ts keeps the arrows pointing that way.
 */

/** One `messageOf` for every layer; it lives in the core (the sink's notices use it). */
export { messageOf } from "../core/output/message-of.ts";
export { bearerToken, bytesEqual, secretMatches } from "./bearer.ts";
export {
  type ApiError,
  apiError,
  type ErrorCode,
  type ErrorStatus,
  errorBodyMessage,
  errorResponse,
} from "./errors.ts";
export {
  type FirstMomentAnswer,
  INVOCATION_ID_PATTERN,
  type InvocationApi,
  type InvocationStatus,
  type InvocationTestControls,
  type InvocationView,
  NO_INVOCATION,
  type OutputLines,
  type ProducerCall,
  type ProducerEnd,
  type ProgressPoll,
  type ProgressRead,
  type ReadCursor,
  type ReadRange,
  type ResultPoll,
  type StartRequest,
  type SubscriptionPath,
} from "./invocation.ts";
export type { McpSessionApi } from "./mcp-session.ts";
export { type Outcome, ok, refusal } from "./outcome.ts";
export { aheadWords, markQueued, queuedAheadOf, queuedWords } from "./queued-detail.ts";
export type { RunApi, RunNote } from "./run.ts";
export {
  CONTAINER_POOL_NAME,
  type ContainerPoolApi,
  type ContainerPoolView,
  NEW_SANDBOX,
  newSandboxId,
  type SandboxApi,
  type SandboxBackend,
  type SandboxContainerApi,
  type SandboxCreate,
  type SandboxDirectoryApi,
  type SandboxLimits,
  type SandboxStatus,
  type SandboxView,
} from "./sandbox.ts";
export {
  mintSandboxToken,
  newTokenNonce,
  parseSandboxToken,
  sandboxOfToken,
  signatureHolds,
} from "./sandbox-token.ts";
export {
  type EditRequest,
  type EditResult,
  EXEC_ID_PATTERN,
  type ExecLimits,
  type ExecLoad,
  type ExecRequest,
  type ExitUpdate,
  type FindRequest,
  type FindResult,
  type GlobRequest,
  type GlobResult,
  GREP_MAX_CONTEXT,
  GREP_MAX_LINES,
  type GrepLine,
  type GrepMatch,
  type GrepRequest,
  type GrepResult,
  type InputRequest,
  type InputState,
  type LsRequest,
  type LsResult,
  MAX_COMMAND_BYTES,
  MAX_READ_LINE_CHARS,
  QUEUE_RETRY_AFTER_SEC,
  type ReadRequest,
  type ReadResult,
  type SearchEngine,
  SHELL_UPDATE_KINDS,
  type ShellUpdate,
  type TerminalPaint,
  type TerminalScreen,
  type TerminalSize,
  type WriteRequest,
  type WriteResult,
} from "./sandbox-wire.ts";
export { durationMs } from "./settings.ts";
export { hmacSha256, toBase64Url } from "./signing.ts";
export {
  expired,
  forwardedSubscription,
  type SandboxCredential,
  sandboxCredentialOf,
  tokenExpiryOf,
} from "./subscription-expiry.ts";
export {
  ATTACH_TOKEN_TTL_SECONDS,
  attachFragment,
  attachOfFragment,
  DEFAULT_TYPIST,
  type HeldSize,
  heldSizeOf,
  INPUT_ECHO_WINDOW_MS,
  lastInputOf,
  MODEL_TYPIST,
  markHeldSize,
  markLastInput,
  TYPIST_NAME_PATTERN,
  type TypedInput,
  typedByPeopleLine,
  typistWords,
} from "./terminal-input.ts";
export { STDIN_KEY_NAMES, STDIN_KEYS } from "./terminal-keys.ts";
export {
  JOB_OUTPUT_BYTES,
  JOB_OUTPUT_LINES,
  MAX_BASH_TIMEOUT_SECONDS,
  MAX_JOB_WAIT_SECONDS,
  MAX_STDIN_BYTES,
  MAX_STDIN_KEYS,
  MAX_STDIN_WAIT_SECONDS,
  MAX_WINDOW_BYTES,
  MAX_WINDOW_LINES,
  OUTPUT_BYTES,
  OUTPUT_LINES,
  READ_LINE_CHARS,
  TTY_DEFAULT_SIZE,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
} from "./tool-caps.ts";
export { WORKER_DEFAULTS, type WorkerConfig, workerConfig } from "./worker-config.ts";
