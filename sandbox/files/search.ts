import { stat } from "node:fs/promises";
import type {
  GlobRequest,
  GlobResult,
  GrepMatch,
  GrepRequest,
  GrepResult,
  SearchEngine,
} from "../../src/protocol/index.ts";
import { ItemRetainer } from "../../src/retention/index.ts";
import { SandboxError } from "../errors.ts";
import type { Jail } from "../jail/jail.ts";
import type { Workspace } from "../workspace.ts";
import { compileGlob } from "./glob-pattern.ts";
import { runRipgrep } from "./ripgrep.ts";
import { fileLines, walkFiles } from "./walker.ts";

/**
 * ripgrep's ignore handling made the walker's: ignore files apply whether or not the
 * workspace is a git repository, and only the workspace's own (no global gitignore, no
 * `.git/info/exclude`).
 */
const RIPGREP_IGNORE_ARGS = ["--no-require-git", "--no-ignore-global", "--no-ignore-exclude"];

/** Longest matched line returned by grep (longer ones are cut and marked with "…"). */
const GREP_MAX_LINE_CHARS = 500;

/** Which engine searches: ripgrep at `rgPath`, or the built-in walker when null. */
export interface SearchOptions {
  workspace: Workspace;
  /** ripgrep runs in it, with the workspace read-only. */
  jail: Jail;
  rgPath: string | null;
}

/**
 * Searches file contents for `pattern`, keeping at most `limit` matches; the search
 * itself stops at the first match past the limit (the probe).
 * @example await grep({ workspace, rgPath: null }, { pattern: "TODO", limit: 100 })
 */
export async function grep(
  opts: SearchOptions,
  req: GrepRequest & { limit: number },
): Promise<GrepResult> {
  const start = await opts.workspace.resolve(req.path);
  const retainer = new ItemRetainer<GrepMatch>({
    kind: "head",
    maxItems: req.limit,
    stop: "stopWhenFull",
  });
  const push = (match: GrepMatch): boolean => !retainer.push(match).shouldStop;
  await assertExists(start, req.path);
  const engine: SearchEngine = opts.rgPath ? "ripgrep" : "walker";
  if (opts.rgPath) await grepWithRipgrep(opts, opts.rgPath, start, req, push);
  else await grepWithWalker(opts.workspace, start, req, push);
  const done = retainer.finish();
  return { matches: done.items, truncated: done.truncated, omitted: done.omitted, engine };
}

/**
 * Lists files whose path matches the glob `pattern`, keeping at most `limit`; the
 * listing stops at the first path past the limit (the probe).
 * @example await glob({ workspace, rgPath: "/usr/bin/rg" }, { pattern: "**\/*.ts", limit: 1000 })
 */
export async function glob(
  opts: SearchOptions,
  req: GlobRequest & { limit: number },
): Promise<GlobResult> {
  const start = await opts.workspace.resolve(req.path);
  await assertExists(start, req.path);
  const matches = compileGlob(req.pattern);
  const retainer = new ItemRetainer<string>({
    kind: "head",
    maxItems: req.limit,
    stop: "stopWhenFull",
  });
  const push = (rel: string): boolean => !retainer.push(rel).shouldStop;
  const engine: SearchEngine = opts.rgPath ? "ripgrep" : "walker";
  if (opts.rgPath) {
    const args = [
      ...RIPGREP_IGNORE_ARGS,
      "--files",
      "--sort",
      "path",
      ...pathArg(opts.workspace, start),
    ];
    // Filtered here, not with `--glob`: ripgrep's globs override the ignore files.
    const run = await runRipgrep(opts.jail, opts.rgPath, args, opts.workspace.root, (rel) =>
      matches(rel) ? push(rel) : true,
    );
    if (!run.stopped && run.exitCode === 2) throw ripgrepFailed(run.stderr);
  } else {
    for await (const rel of walkFiles(opts.workspace, start)) {
      if (matches(rel) && !push(rel)) break;
    }
  }
  const done = retainer.finish();
  return { paths: done.items, truncated: done.truncated, omitted: done.omitted, engine };
}

async function grepWithRipgrep(
  { jail, workspace }: SearchOptions,
  rgPath: string,
  start: string,
  req: GrepRequest,
  push: (m: GrepMatch) => boolean,
): Promise<void> {
  const args = [...RIPGREP_IGNORE_ARGS, "--json", "--sort", "path"];
  if (req.ignoreCase) args.push("--ignore-case");
  if (req.literal) args.push("--fixed-strings");
  args.push("--regexp", req.pattern, ...pathArg(workspace, start));
  // Filtered here, not with `--glob`: ripgrep's globs override the ignore files.
  const globMatches = req.glob ? compileGlob(req.glob) : null;
  const run = await runRipgrep(jail, rgPath, args, workspace.root, (line) => {
    const match = parseRipgrepMatch(line);
    if (!match || (globMatches && !globMatches(match.path))) return true;
    return push(match);
  });
  if (!run.stopped && run.exitCode === 2) throw ripgrepFailed(run.stderr);
}

async function grepWithWalker(
  workspace: Workspace,
  start: string,
  req: GrepRequest,
  push: (m: GrepMatch) => boolean,
): Promise<void> {
  const regex = compileRegex(req);
  const globMatches = req.glob ? compileGlob(req.glob) : null;
  for await (const rel of walkFiles(workspace, start)) {
    if (globMatches && !globMatches(rel)) continue;
    for await (const { line, text } of fileLines(workspace, rel)) {
      if (regex.test(text) && !push({ path: rel, line, text: previewLine(text) })) return;
    }
  }
}

function compileRegex(req: GrepRequest): RegExp {
  const source = req.literal ? req.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : req.pattern;
  try {
    return new RegExp(source, req.ignoreCase ? "iu" : "u");
  } catch (err) {
    throw new SandboxError(
      400,
      "bad_request",
      `pattern '${req.pattern}' is not a valid regular expression (${(err as Error).message}); pass literal: true to search for it as text`,
    );
  }
}

interface RipgrepText {
  text?: string;
  bytes?: string;
}

function parseRipgrepMatch(line: string): GrepMatch | null {
  const event = JSON.parse(line) as {
    type: string;
    data: { path: RipgrepText; lines: RipgrepText; line_number: number | null };
  };
  if (event.type !== "match") return null;
  const text = ripgrepText(event.data.lines).replace(/\r?\n$/, "");
  return {
    path: ripgrepText(event.data.path),
    line: event.data.line_number ?? 0,
    text: previewLine(text),
  };
}

function ripgrepText(t: RipgrepText): string {
  return t.text ?? Buffer.from(t.bytes ?? "", "base64").toString("utf8");
}

function previewLine(text: string): string {
  return text.length > GREP_MAX_LINE_CHARS ? `${text.slice(0, GREP_MAX_LINE_CHARS)}…` : text;
}

function pathArg(workspace: Workspace, start: string): string[] {
  return start === workspace.root ? [] : ["--", workspace.relative(start)];
}

async function assertExists(abs: string, rel: string | undefined): Promise<void> {
  try {
    await stat(abs);
  } catch {
    throw new SandboxError(
      404,
      "not_found",
      `'${rel}' does not exist in the workspace; list files with glob`,
    );
  }
}

function ripgrepFailed(stderr: string): SandboxError {
  return new SandboxError(
    400,
    "bad_request",
    `search failed: ${stderr || "ripgrep exited with an error"}`,
  );
}
