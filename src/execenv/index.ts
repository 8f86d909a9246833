export { SandboxHttpError, SandboxStreamError, SandboxUnreachableError } from "./errors.ts";
export { MAX_NDJSON_LINE_BYTES, readNdjson } from "./ndjson.ts";
export { type KillResult, SandboxClient } from "./sandbox-client.ts";
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
