export { SandboxHttpError, SandboxStreamError, SandboxUnreachableError } from "./errors.ts";
export { EXEC_ID_PATTERN, execIdFor } from "./exec-id.ts";
export { MAX_NDJSON_LINE_BYTES, readNdjson } from "./ndjson.ts";
export { type KillResult, SandboxClient } from "./sandbox-client.ts";
export {
  bashEnding,
  type ExitUpdate,
  runShell,
  type ShellRunOptions,
  type ShellRunResult,
  type ShellSink,
} from "./shell-run.ts";
export type {
  ExecLimits,
  ExecRequest,
  GlobRequest,
  GlobResult,
  GrepMatch,
  GrepRequest,
  GrepResult,
  ReadRequest,
  ReadResult,
  SearchEngine,
  ShellUpdate,
} from "./types.ts";
