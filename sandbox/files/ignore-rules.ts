import { open } from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";

/** The ignore files ripgrep reads in each directory, lowest precedence first. */
const IGNORE_FILES = [".gitignore", ".ignore", ".rgignore"] as const;

/** One directory's rules: its ignore files, matched against paths relative to it. */
interface Level {
  /** Workspace-relative directory ("" for the root). */
  dir: string;
  rules: Ignore;
}

/**
 * The ignore rules in force in one directory of a walk, as ripgrep applies them with
 * `--no-require-git`: `.gitignore`, `.ignore` and `.rgignore` of that directory and of
 * every directory above it up to the workspace root, a deeper file's rules (and, within
 * a directory, `.rgignore` over `.ignore` over `.gitignore`) deciding over a shallower
 * one's, `!` re-including. Parsed by the `ignore` package (git's own rules).
 * @example const rules = await IgnoreRules.forDirectory(ws.root, "src"); rules.ignores("src/gen", true)
 */
export class IgnoreRules {
  readonly #levels: readonly Level[];

  private constructor(levels: readonly Level[]) {
    this.#levels = levels;
  }

  /** The rules for workspace-relative directory `dir`, reading ignore files from the root down. */
  static async forDirectory(root: string, dir: string): Promise<IgnoreRules> {
    let rules = new IgnoreRules([]);
    const parts = dir === "" ? [] : dir.split("/");
    rules = await rules.enter(root, "");
    for (let i = 1; i <= parts.length; i++)
      rules = await rules.enter(root, parts.slice(0, i).join("/"));
    return rules;
  }

  /** The rules inside subdirectory `dir` (workspace-relative) of this one. */
  async enter(root: string, dir: string): Promise<IgnoreRules> {
    const texts: string[] = [];
    for (const name of IGNORE_FILES) {
      try {
        texts.push(await readHead(path.join(root, dir, name), MAX_IGNORE_FILE_BYTES));
      } catch {}
    }
    if (texts.length === 0) return this;
    return new IgnoreRules([...this.#levels, { dir, rules: ignore().add(texts.join("\n")) }]);
  }

  /** True when workspace-relative `rel` (a directory when `isDir`) is ignored. */
  ignores(rel: string, isDir: boolean): boolean {
    let ignored = false;
    for (const level of this.#levels) {
      const inner = level.dir === "" ? rel : rel.slice(level.dir.length + 1);
      const result = level.rules.test(isDir ? `${inner}/` : inner);
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }
}

/**
 * Bytes of an ignore file read (decision 244): a workspace's ignore file is user data,
 * and one of a gigabyte must not fill the host's memory. Rules past it do not apply.
 */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** The first `max` bytes of `file` as text. */
async function readHead(file: string, max: number): Promise<string> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(Math.min((await handle.stat()).size, max));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}
