import type { Dirent } from "node:fs";
import { type FileHandle, stat } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { IgnoreRules } from "./ignore-rules.ts";
import { openInside } from "./open-inside.ts";
import { byName, ENTRY_WINDOW, smallestEntries } from "./sorted-entries.ts";

/**
 * Files under `abs` in a stable order (entries sorted by name, depth first), as
 * workspace-relative paths. Like ripgrep's defaults: hidden entries (names starting
 * with `.`) are skipped below the starting point, symlinks are not followed, and
 * `.gitignore` / `.ignore` / `.rgignore` rules apply as ripgrep applies them with
 * `--no-require-git` (`IgnoreRules`).
 * Each directory is opened and checked through its descriptor before it is listed
 * (`openInside`), so a directory swapped for a symlink meanwhile is not followed out.
 * A starting point that is a file yields just that file.
 * @example for await (const rel of walkFiles(ws, ws.root)) console.log(rel);
 */
export async function* walkFiles(
  workspace: Workspace,
  abs: string,
  options: WalkOptions = { hidden: false },
): AsyncGenerator<string> {
  const info = await stat(abs);
  if (info.isFile()) {
    yield workspace.relative(abs);
    return;
  }
  const rules = await IgnoreRules.forDirectory(workspace.root, workspace.relative(abs));
  yield* walkDir(workspace, abs, rules, options);
}

/** How a walk treats hidden entries. */
interface WalkOptions {
  /**
   * Walk hidden entries too (pi's `find`, like `fd --hidden`), except the `.git` and
   * `.toolwire` folders (version control and Toolwire's own spill files).
   */
  hidden: boolean;
}

/** Hidden folders a walk with `hidden` still skips. */
const ALWAYS_SKIPPED = new Set([".git", ".toolwire"]);

async function* walkDir(
  workspace: Workspace,
  dir: string,
  rules: IgnoreRules,
  options: WalkOptions,
): AsyncGenerator<string> {
  const root = workspace.root;
  const handle = await openInside(workspace, dir, workspace.relative(dir), "directory");
  let open = true;
  const close = async () => {
    if (open) {
      open = false;
      await handle.close();
    }
  };
  try {
    // In name order, a window of entries at a time: a huge directory is never held whole.
    let after: Dirent | null = null;
    for (;;) {
      const { entries } = await smallestEntries(
        `/proc/self/fd/${handle.fd}`,
        byName,
        after,
        ENTRY_WINDOW,
      );
      const whole = entries.length < ENTRY_WINDOW;
      // A directory read whole is let go before its folders are walked: a deep tree
      // then holds one descriptor, not one per level.
      if (whole) await close();
      for (const entry of entries) {
        if (entry.name.startsWith(".") && (!options.hidden || ALWAYS_SKIPPED.has(entry.name))) {
          continue;
        }
        const full = path.join(dir, entry.name);
        const rel = toRel(root, full);
        if (!entry.isDirectory() && !entry.isFile()) continue;
        if (rules.ignores(rel, entry.isDirectory())) continue;
        if (entry.isDirectory()) {
          yield* walkDir(workspace, full, await rules.enter(root, rel), options);
        } else yield rel;
      }
      if (whole) return;
      after = entries.at(-1) ?? null;
    }
  } finally {
    await close();
  }
}

function toRel(root: string, abs: string): string {
  return path.relative(root, abs).split(path.sep).join("/");
}

/** Longest line prefix the walker keeps for matching (memory stays bounded). */
const MAX_WALKER_LINE_CHARS = 1 << 20;

/**
 * Lines of a text file with their 1-based numbers; nothing for a binary file (NUL
 * bytes in its first 8 KiB), as ripgrep does, and nothing for a file `openInside`
 * refuses (swapped for a symlink out, a hard link, not a regular file). Lines longer
 * than `MAX_WALKER_LINE_CHARS` are cut to that prefix. Stop iterating to stop reading.
 * @example for await (const { line, text } of fileLines(ws, "src/a.ts")) ...
 */
export async function* fileLines(
  workspace: Workspace,
  rel: string,
): AsyncGenerator<{ line: number; text: string }> {
  let handle: FileHandle;
  try {
    handle = await openInside(workspace, path.join(workspace.root, rel), rel, "file");
  } catch (err) {
    if (err instanceof SandboxError) return;
    throw err;
  }
  yield* handleLines(handle);
}

/**
 * Lines of the file open at `handle` (checked by whoever opened it), as `fileLines`
 * yields them; the handle is closed at the end or when iteration stops.
 */
export async function* handleLines(
  handle: FileHandle,
): AsyncGenerator<{ line: number; text: string }> {
  const decoder = new TextDecoder("utf-8");
  let carry = "";
  let line = 0;
  let first = true;
  for await (const chunk of handle.createReadStream() as AsyncIterable<Buffer>) {
    if (first && chunk.subarray(0, 8192).includes(0)) return;
    first = false;
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      yield { line: ++line, text: capped(carry, text.slice(start, nl)) };
      carry = "";
      start = nl + 1;
    }
    carry = capped(carry, text.slice(start));
  }
  carry = capped(carry, decoder.decode());
  if (carry !== "") yield { line: ++line, text: carry };
}

function capped(carry: string, piece: string): string {
  if (carry.length >= MAX_WALKER_LINE_CHARS) return carry;
  return (carry + piece).slice(0, MAX_WALKER_LINE_CHARS);
}
