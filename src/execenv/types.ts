/** The sandbox host's HTTP vocabulary, defined once in the protocol (src/protocol/sandbox-wire.ts). */
export type {
  ExecLimits,
  ExecRequest,
  ExitUpdate,
  GlobRequest,
  GlobResult,
  GrepMatch,
  GrepRequest,
  GrepResult,
  ReadRequest,
  ReadResult,
  SearchEngine,
  ShellUpdate,
} from "../protocol/index.ts";
