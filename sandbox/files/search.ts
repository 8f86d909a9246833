import { stat } from "node:fs/promises";
import { ItemRetainer, Omitted } from "../../src/core/retention/index.ts";
import {
  type GlobRequest,
  type GlobResult,
  GREP_MAX_LINES,
  type GrepMatch,
  type GrepRequest,
  type GrepResult,
  type SearchEngine,
} from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import type { Jail } from "../jail/jail.ts";
import { SPILL_JAIL_PATH, SpillFolder } from "../spill-folder.ts";
import type { Workspace } from "../workspace.ts";
import { compileGlob } from "./glob-pattern.ts";
import { GrepBlocks } from "./grep-blocks.ts";
import { type RipgrepRun, runRipgrep } from "./ripgrep.ts";
import { RIPGREP_LINE_ARGS, RIPGREP_RECORD_BYTES, RipgrepLines } from "./ripgrep-lines.ts";
import { fileLines, handleLines, walkFiles } from "./walker.ts";

/**
 * ripgrep's ignore handling made the walker's: ignore files apply whether or not the
 * workspace is a git repository, and only the workspace's own (no global gitignore, no
 * `.git/info/exclude`).
 */
const RIPGREP_IGNORE_ARGS = ["--no-require-git", "--no-ignore-global", "--no-ignore-exclude"];

/** Which engine searches: ripgrep at `rgPath`, or the built-in walker when null. */
interface SearchOptions {
  workspace: Workspace;
  /** The spill files, searched when the path is `/toolwire/spill` or one of its files. */
  spills: SpillFolder;
  /** ripgrep runs in it, with the workspace read-only. */
  jail: Jail;
  rgPath: string | null;
}

/**
 * Searches file contents for `pattern`, keeping at most `limit` matches, each with
 * `context` lines before and after; the search itself stops at the first match past the
 * limit (the probe), or before the match whose lines would pass `GREP_MAX_LINES`.
 * @example await grep({ workspace, rgPath: null }, { pattern: "TODO", limit: 100 })
 */
export async function grep(
  opts: SearchOptions,
  req: GrepRequest & { limit: number },
): Promise<GrepResult> {
  const retainer = new ItemRetainer<GrepMatch>({
    kind: "head",
    maxItems: req.limit,
    stop: "stopWhenFull",
  });
  let lines = 0;
  let lineCapReached = false;
  const blocks = new GrepBlocks(req.context ?? 0, (match) => {
    const count = 1 + (match.before?.length ?? 0) + (match.after?.length ?? 0);
    if (retainer.seen < req.limit && lines + count > GREP_MAX_LINES) {
      lineCapReached = true;
      return false;
    }
    lines += count;
    return !retainer.push(match).shouldStop;
  });
  const engine: SearchEngine = opts.rgPath ? "ripgrep" : "walker";
  const spillName = SpillFolder.nameOf(req.path);
  let searched: boolean;
  if (spillName !== null) {
    searched = await grepSpills(opts, spillName, req, blocks);
  } else {
    const start = await opts.workspace.resolve(req.path);
    const oneFile = await assertExists(start, req.path);
    searched = opts.rgPath
      ? await grepWithRipgrep(
          opts,
          opts.rgPath,
          pathArg(opts.workspace, start),
          oneFile,
          req,
          blocks,
        )
      : await grepWithWalker(opts.workspace, start, req, blocks);
  }
  if (!searched) throw noFilesToSearch(req.path);
  blocks.finish();
  const done = retainer.finish();
  const stoppedBy = done.truncated ? "limit" : lineCapReached ? "lines" : null;
  return {
    matches: done.items,
    truncated: stoppedBy !== null,
    omitted: stoppedBy === "lines" ? Omitted.atLeast(1) : done.omitted,
    engine,
    stoppedBy,
    cutLines: blocks.cutLines,
  };
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
      "--null",
      "--sort",
      "path",
      ...pathArg(opts.workspace, start),
    ];
    // Filtered here, not with `--glob`: ripgrep's globs override the ignore files.
    const run = await runRipgrep(opts.jail, opts.rgPath, args, opts.workspace.root, {
      separator: 0,
      maxBytes: RIPGREP_RECORD_BYTES,
      onRecord: ({ head }) => {
        const rel = head.toString("utf8");
        return matches(rel) ? push(rel) : true;
      },
    });
    assertRipgrepEnded(run);
    if (!run.stopped && run.exitCode === 2) throw ripgrepFailed(run.stderr);
  } else {
    for await (const rel of walkFiles(opts.workspace, start)) {
      if (matches(rel) && !push(rel)) break;
    }
  }
  const done = retainer.finish();
  return { paths: done.items, truncated: done.truncated, omitted: done.omitted, engine };
}

/**
 * Searches the spill folder (`name` "") or one spill file; the paths in the matches are
 * the jail's (`/toolwire/spill/<id>.log`). False when there was no file to search.
 */
async function grepSpills(
  opts: SearchOptions,
  name: string,
  req: GrepRequest,
  blocks: GrepBlocks,
): Promise<boolean> {
  if (name !== "") await (await opts.spills.openRead(name)).close();
  const target = name === "" ? SPILL_JAIL_PATH : `${SPILL_JAIL_PATH}/${name}`;
  if (opts.rgPath) {
    return grepWithRipgrep(opts, opts.rgPath, ["--", target], name !== "", req, blocks);
  }
  const regex = compileRegex(req);
  const globMatches = req.glob ? compileGlob(req.glob) : null;
  const names = name === "" ? await opts.spills.names() : [name];
  let searched = false;
  for (const file of names) {
    const shown = `${SPILL_JAIL_PATH}/${file}`;
    if (globMatches && !globMatches(file)) continue;
    let handle: Awaited<ReturnType<SpillFolder["openRead"]>>;
    try {
      handle = await opts.spills.openRead(file);
    } catch (err) {
      if (err instanceof SandboxError) continue;
      throw err;
    }
    searched = true;
    if (!(await searchLines(handleLines(handle), shown, regex, req, blocks))) return true;
  }
  return searched;
}

/**
 * Runs ripgrep over `paths` (none: the workspace); false when it searched no file. One
 * named file is searched as text even with NUL bytes in it (`--text`); a folder's binary
 * files are skipped, as the walker skips them.
 */
async function grepWithRipgrep(
  { jail, workspace }: SearchOptions,
  rgPath: string,
  paths: string[],
  oneFile: boolean,
  req: GrepRequest,
  blocks: GrepBlocks,
): Promise<boolean> {
  const args = [...RIPGREP_IGNORE_ARGS, ...RIPGREP_LINE_ARGS, "--sort", "path"];
  if (oneFile) args.push("--text");
  if (req.ignoreCase) args.push("--ignore-case");
  if (req.literal) args.push("--fixed-strings");
  if (req.context) args.push("--context", String(req.context));
  args.push("--regexp", req.pattern, ...paths);
  // Filtered here, not with `--glob`: ripgrep's globs override the ignore files.
  const globMatches = req.glob ? compileGlob(req.glob) : null;
  const lines = new RipgrepLines((l) =>
    globMatches && !globMatches(l.path) ? true : blocks.line(l.path, l.line, l.text, l.isMatch),
  );
  const run = await runRipgrep(jail, rgPath, args, workspace.root, {
    separator: 0x0a,
    maxBytes: RIPGREP_RECORD_BYTES,
    onRecord: (record) => lines.record(record),
  });
  assertRipgrepEnded(run);
  if (!run.stopped && run.exitCode === 2) {
    if (NO_FILES_SEARCHED.test(run.stderr)) return false;
    throw ripgrepFailed(run.stderr);
  }
  return true;
}

/** False when the walk met no file to search (all hidden, ignored or filtered out). */
async function grepWithWalker(
  workspace: Workspace,
  start: string,
  req: GrepRequest,
  blocks: GrepBlocks,
): Promise<boolean> {
  const regex = compileRegex(req);
  const globMatches = req.glob ? compileGlob(req.glob) : null;
  let searched = false;
  for await (const rel of walkFiles(workspace, start)) {
    if (globMatches && !globMatches(rel)) continue;
    searched = true;
    if (!(await searchLines(fileLines(workspace, rel), rel, regex, req, blocks))) return true;
  }
  return searched;
}

/**
 * Offers one file's lines to `blocks` (only the matching ones without context); false
 * once the search should stop. Leaving the loop early closes the file.
 */
async function searchLines(
  lines: AsyncIterable<{ line: number; text: string }>,
  shown: string,
  regex: RegExp,
  req: GrepRequest,
  blocks: GrepBlocks,
): Promise<boolean> {
  const everyLine = (req.context ?? 0) > 0;
  for await (const { line, text } of lines) {
    const isMatch = regex.test(text);
    if ((isMatch || everyLine) && !blocks.line(shown, line, text, isMatch)) return false;
  }
  return blocks.endFile();
}

/** ripgrep's complaint when every file was filtered out (exit 2). */
const NO_FILES_SEARCHED = /No files were searched/;

function noFilesToSearch(path: string | undefined): SandboxError {
  const where = path === undefined || path === "" || path === "." ? "the workspace" : `'${path}'`;
  return new SandboxError(
    "not_found",
    `no files to search in ${where}: it has no files, or only hidden or ignored ones (.gitignore, .ignore); name a file or a hidden folder as the path to search it`,
  );
}

function compileRegex(req: GrepRequest): RegExp {
  const source = req.literal ? req.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : req.pattern;
  try {
    return new RegExp(source, req.ignoreCase ? "iu" : "u");
  } catch (err) {
    throw new SandboxError(
      "bad_request",
      `pattern '${req.pattern}' is not a valid regular expression (${(err as Error).message}); pass literal: true to search for it as text`,
    );
  }
}

function pathArg(workspace: Workspace, start: string): string[] {
  return start === workspace.root ? [] : ["--", workspace.relative(start)];
}

/** Whether `abs` is a file (not a folder); a clear 404 when it does not exist. */
async function assertExists(abs: string, rel: string | undefined): Promise<boolean> {
  try {
    return (await stat(abs)).isFile();
  } catch {
    throw new SandboxError(
      "not_found",
      `'${rel}' does not exist in the workspace; list files with glob`,
    );
  }
}

/**
 * ripgrep ended by a signal we did not send, or aborted (bwrap passes on 128 + signal):
 * its memory ran out on a line too large to hold. An error, never "no matches".
 */
function assertRipgrepEnded(run: RipgrepRun): void {
  if (run.stopped) return;
  const how =
    run.signal ?? (run.exitCode !== null && run.exitCode > 2 ? `exit ${run.exitCode}` : null);
  if (how === null) return;
  throw new SandboxError(
    "bad_request",
    `search failed: ripgrep stopped (${how}), most likely out of memory on a file with a very long line (the sandbox's memory limit applies to it); search a smaller file, or use bash (e.g. grep -c, head -c)`,
  );
}

function ripgrepFailed(stderr: string): SandboxError {
  return new SandboxError(
    "bad_request",
    `search failed: ${stderr || "ripgrep exited with an error"}`,
  );
}
