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
  /** Run under a pseudo-terminal of this size (stdin, stdout and stderr are the terminal). */
  tty?: TerminalSize;
  /** Keep stdin open as a pipe the caller writes with `POST /v1/exec/:execId/input` (a background call). */
  stdin?: boolean;
}

/** A terminal's size in character cells. */
export interface TerminalSize {
  cols: number;
  rows: number;
}

/**
 * Body of `POST /v1/exec/:execId/input`: bytes for the command's terminal or stdin pipe,
 * then (with `eof`) the end of its input. The answer comes when the output settles (the
 * command waits for input, or is quiet for a moment, or exits), or after `waitMs`.
 */
export interface InputRequest {
  /** Text to send as is (UTF-8); a terminal's keys are their bytes (`\r` Enter, `\u0003` Ctrl-C). */
  data?: string;
  /** Close stdin after `data` (a pipe: EOF; a terminal: its EOF character, Ctrl-D). */
  eof?: boolean;
  /** Longest wait for the output to settle, in ms (0: answer at once). */
  waitMs?: number;
}

/** A terminal's screen as an emulator (xterm) renders it: plain text rows, no escapes. */
export interface TerminalScreen extends TerminalSize {
  /** The rows top to bottom, trailing blanks cut. */
  lines: string[];
  /** Where the cursor is, 0-based. */
  cursor: { row: number; col: number };
  /** True when a full-screen program (less, vim, top) drew on the alternate screen. */
  alternate: boolean;
}

/**
 * A terminal's screen as the bytes that draw it on a fresh terminal of its size
 * (`GET /v1/exec/:execId/paint`, decision 191): a viewer that joins late writes `data`,
 * then the output from byte `atByte` on, and shows what the model reads.
 */
export interface TerminalPaint extends TerminalSize {
  /** Escape sequences and text: reset, the alternate screen if on it, the cells, modes, cursor. */
  data: string;
  /** How many bytes of the output the painted screen has taken in. */
  atByte: number;
}

/**
 * Where a running exec's input stands (the answer of `/input` and `GET /v1/exec/:execId/terminal`).
 * `awaitingInput` is read from the kernel: a process of the command (a terminal's foreground
 * process group) is blocked reading the terminal or the stdin pipe.
 */
export interface InputState {
  /** The exec runs under a terminal (`screen` is set). */
  tty: boolean;
  screen?: TerminalScreen;
  awaitingInput: boolean;
  /** The text before the cursor (a terminal) or the last unfinished line (a pipe), when awaiting input. */
  prompt?: string;
  /** Bytes the command has printed so far (its output's total). */
  totalBytes: number;
  /** The command can still be written to (it runs, and its input was not closed). */
  inputOpen: boolean;
  exited: boolean;
}

/** Seconds a caller refused for a full line of commands is told to wait (`Retry-After`). */
export const QUEUE_RETRY_AFTER_SEC = 5;

/**
 * How busy one sandbox's commands are (`GET /healthz`'s `execs`): the Worker refuses a
 * call that would run a command with a 429 while `queued` has reached `maxQueued`
 * (decision 248).
 */
export interface ExecLoad {
  running: number;
  queued: number;
  maxRunning: number;
  maxQueued: number;
}

/** One NDJSON line of the exec stream. `drop` counts UTF-16 code units. */
export type ShellUpdate =
  | { kind: "replace"; output: { text: string } & ShellOutputMetadata }
  /** The exec waits its turn with `ahead` before it; null: it waits no more (it runs, or ended unstarted). */
  | { kind: "queue"; ahead: number | null }
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

/** Every kind of exec stream line, so a reader can refuse what it does not know. */
export const SHELL_UPDATE_KINDS: ReadonlySet<string> = new Set(
  Object.keys({
    replace: true,
    queue: true,
    append: true,
    slide: true,
    metadata: true,
    exit: true,
  } satisfies Record<ShellUpdate["kind"], true>),
);

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
