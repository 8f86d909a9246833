/**
 * pi's `find` on the host (decision 132): files whose path matches a glob, hidden ones
 * included, `.gitignore` / `.ignore` applied, listed relative to the searched folder.
 * A pattern without `/` matches file names at any depth; one with `/` matches the path
 * below the folder, anywhere in it unless it starts with `/` or `**` (as pi runs `fd`).
 */
import path from "node:path";
import { ItemRetainer } from "../../src/core/retention/index.ts";
import type { FindRequest, FindResult } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { compileGlob } from "./glob-pattern.ts";
import { walkFiles } from "./walker.ts";

/**
 * The first `limit` matching files under `path`, in path order; the walk stops at the
 * first match past the limit (the probe).
 * @example await findFiles(ws, { pattern: "*.ts", path: "src", limit: 1000 }) // { paths: ["a.ts", "lib/b.ts"], ... }
 */
export async function findFiles(
  workspace: Workspace,
  req: FindRequest & { limit: number },
): Promise<FindResult> {
  const start = await workspace.resolve(req.path);
  const base = workspace.relative(start);
  const matches = compileGlob(findGlob(req.pattern));
  const retainer = new ItemRetainer<string>({
    kind: "head",
    maxItems: req.limit,
    stop: "stopWhenFull",
  });
  let walk: AsyncGenerator<string>;
  try {
    walk = walkFiles(workspace, start, { hidden: true });
    for await (const rel of walk) {
      const below =
        base === "" ? rel : rel === base ? path.basename(rel) : rel.slice(base.length + 1);
      if (matches(below) && retainer.push(below).shouldStop) break;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new SandboxError(
        "not_found",
        `'${req.path}' does not exist in the workspace; list files with ls or find`,
      );
    }
    throw err;
  }
  const done = retainer.finish();
  return { paths: done.items, truncated: done.truncated, omitted: done.omitted, engine: "walker" };
}

/** The glob `compileGlob` gets: pi's implied `**\/` before a path pattern. */
function findGlob(pattern: string): string {
  if (!pattern.includes("/") || pattern.startsWith("/") || pattern.startsWith("**")) return pattern;
  return `**/${pattern}`;
}
