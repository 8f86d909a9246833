/**
 * The sandbox host's HTTP vocabulary: request and answer bodies of `/v1/exec`, `/v1/read`,
 * `/v1/grep`, `/v1/glob`, and the Shell updates an exec streams as NDJSON. The host
 * (sandbox/) answers in it and the sandbox client (src/execenv) reads it.
 */
import type { ShellOutputMetadata } from "../core/output/index.ts";
import type { Omitted } from "../core/retention/index.ts";

/**
 * Longest command, in bytes: it is passed as one argument (`bash -c <command>`), and the
 * kernel takes at most 128 KiB per argument, its NUL included (MAX_ARG_STRLEN); past it,
 * exec fails with E2BIG. The same holds for each `NAME=value` of the environment.
 */
export const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/** Exec ids name spill files and URLs: 1-128 letters, digits, `_` or `-`. */
export const EXEC_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Limits for one exec: which end survives and the caps (defaults tail, 50 KiB, 2000 lines). */
export interface ExecLimits {
  retain?: "head" | "tail";
  maxBytes?: number;
  maxLines?: number;
}

/** Body of `POST /v1/exec`. */
export interface ExecRequest {
  execId: string;
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  timeoutSec?: number;
  /** Seconds without output after which the command is stopped. */
  idleTimeoutSec?: number;
  limits?: ExecLimits;
}

/** One NDJSON line of the exec stream. `drop` counts UTF-16 code units. */
export type ShellUpdate =
  | { kind: "replace"; output: { text: string } & ShellOutputMetadata }
  | { kind: "append"; text: string; metadata: ShellOutputMetadata }
  | { kind: "slide"; drop: number; text: string; metadata: ShellOutputMetadata }
  | { kind: "metadata"; metadata: ShellOutputMetadata }
  | {
      kind: "exit";
      exitCode: number | null;
      signal?: string;
      error?: string;
      /** The limit that stopped the command: the wall clock, or its silence. */
      stoppedBy?: "timeout" | "idleTimeout";
    };

/** The last update of an exec: how the process ended. */
export type ExitUpdate = Extract<ShellUpdate, { kind: "exit" }>;

/** Body of `POST /v1/read`: a window of lines. */
export interface ReadRequest {
  path: string;
  /** 1-based first line (default 1). */
  offset?: number;
  /** Most lines to return (default 2000). */
  limit?: number;
  /**
   * Longer lines are cut to this many characters (default 2000, the `read` tool's; at
   * most `MAX_READ_LINE_CHARS`). job_output asks for more: it gives lines whole.
   */
  maxLineChars?: number;
}

/** Longest line a read may ask to be given whole. */
export const MAX_READ_LINE_CHARS = 65_536;

/** Answer of `POST /v1/read`. Line numbers are 1-based. */
export interface ReadResult {
  path: string;
  /** Number of the first returned line. */
  startLine: number;
  /** The lines, each cut to the per-line preview cap when longer. */
  lines: string[];
  totalLines: number;
  /** How many returned lines were cut by the per-line preview cap. */
  cutLines: number;
  /** Why the window ended before the file did, if it did. */
  truncatedBy: "lines" | "bytes" | null;
  /** The offset that continues after this window, when there is more. */
  nextOffset?: number;
}

/** Most lines `grep` shows before and after each match (its `context`). */
export const GREP_MAX_CONTEXT = 100;

/**
 * Most lines one `grep` answer holds, matches and context lines together: the search
 * stops before a match whose lines would pass it (as many as the tool can show).
 */
export const GREP_MAX_LINES = 10_000;

/** Body of `POST /v1/grep`. */
export interface GrepRequest {
  pattern: string;
  path?: string;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  /** Lines to show before and after each match (default 0, at most `GREP_MAX_CONTEXT`). */
  context?: number;
  /** Most matches to keep (default 100). */
  limit?: number;
}

/** One line of a file, 1-based, cut to the preview cap when longer. */
export interface GrepLine {
  line: number;
  text: string;
}

/**
 * One match. With `context`, `before` and `after` hold up to that many lines around
 * it; blocks of nearby matches overlap and repeat their shared lines, as pi's grep does.
 */
export interface GrepMatch {
  path: string;
  line: number;
  text: string;
  before?: GrepLine[];
  after?: GrepLine[];
}

/** Which search ran: ripgrep when on the host's PATH, else the built-in walker. */
export type SearchEngine = "ripgrep" | "walker";

/** Answer of `POST /v1/grep`. `truncated` means the limit cut the search short. */
export interface GrepResult {
  matches: GrepMatch[];
  truncated: boolean;
  /** `atLeast(1)` when the search stopped at the probe: more may exist, how many is unknown. */
  omitted: Omitted;
  engine: SearchEngine;
  /** What stopped the search early: the match `limit`, or `GREP_MAX_LINES`; null when it ran to the end. */
  stoppedBy: "limit" | "lines" | null;
  /** How many shown lines (matches and context) were cut by the per-line preview cap. */
  cutLines: number;
}

/** Body of `POST /v1/glob`. */
export interface GlobRequest {
  pattern: string;
  path?: string;
  /** Most paths to keep (default 1000). */
  limit?: number;
}

/** Answer of `POST /v1/glob`. Paths are relative to the workspace root. */
export interface GlobResult {
  paths: string[];
  truncated: boolean;
  /** `atLeast(1)` when the listing stopped at the probe. */
  omitted: Omitted;
  engine: SearchEngine;
}

/** Body of `POST /v1/write`: the whole new content of a file. */
export interface WriteRequest {
  path: string;
  content: string;
}

/** Answer of `POST /v1/write`: what was written (UTF-8 bytes, lines). */
export interface WriteResult {
  path: string;
  bytes: number;
  lines: number;
}

/** Body of `POST /v1/edit`: replacements, each matched against the original file. */
export interface EditRequest {
  path: string;
  edits: { oldText: string; newText: string }[];
}

/** Answer of `POST /v1/edit`. `diff` is pi's numbered line diff, at most 32 KiB (it also travels in `details`, capped at 64 KiB). */
export interface EditResult {
  path: string;
  /** How many replacements were made. */
  replaced: number;
  diff: string;
  /** First changed line, 1-based, in the new file. */
  firstChangedLine?: number;
}

/** Body of `POST /v1/ls`. */
export interface LsRequest {
  path?: string;
  /** Most entries to return (default 500). */
  limit?: number;
}

/** Answer of `POST /v1/ls`: names sorted case-insensitively, `/` after directories. */
export interface LsResult {
  path: string;
  entries: string[];
  /** Entries in the directory, shown or not. */
  total: number;
}

/** Body of `POST /v1/find`: pi's `find` (hidden files too, paths relative to `path`). */
export interface FindRequest {
  pattern: string;
  path?: string;
  /** Most paths to keep (default 1000). */
  limit?: number;
}

/** Answer of `POST /v1/find`. Paths are relative to the searched directory. */
export type FindResult = GlobResult;
