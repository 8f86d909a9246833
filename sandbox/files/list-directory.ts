import type { Dirent } from "node:fs";
import type { LsResult } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { openInside } from "./open-inside.ts";
import { smallestEntries } from "./sorted-entries.ts";

/**
 * pi's `ls` on the host: a directory's entries, dotfiles included, sorted as pi sorts
 * them (case-insensitively), `/` after directories, the first `limit`. The directory is
 * opened and its descriptor checked before it is listed (`openInside`). Entry kinds come
 * from the listing itself, not from following links: a symlink shows as a plain name,
 * so nothing outside the workspace is looked at. Only the first `limit` entries are
 * held while the directory is read, however many it has (sorted-entries.ts).
 * @example await listDirectory(ws, abs, "src", 500) // { path: "src", entries: ["a.ts", "lib/"], total: 2 }
 */
export async function listDirectory(
  workspace: Workspace,
  abs: string,
  rel: string,
  limit: number,
): Promise<LsResult> {
  let handle: Awaited<ReturnType<typeof openInside>>;
  try {
    handle = await openInside(workspace, abs, rel || ".", "directory");
  } catch (err) {
    if (err instanceof SandboxError && err.message.includes("not a directory")) {
      throw new SandboxError("bad_request", `'${rel}' is not a directory; read it with read`);
    }
    throw err;
  }
  try {
    const { entries, total } = await smallestEntries(
      `/proc/self/fd/${handle.fd}`,
      piOrder,
      null,
      limit,
    );
    const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    return { path: rel || ".", entries: names, total };
  } finally {
    await handle.close();
  }
}

/** One collator for every comparison (`localeCompare` builds one per call: 10× slower). */
const collator = new Intl.Collator();

/** pi's order (case-insensitive), then the bytes of the name, so no two names tie. */
function piOrder(a: Dirent, b: Dirent): number {
  const folded = collator.compare(a.name.toLowerCase(), b.name.toLowerCase());
  if (folded !== 0) return folded;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
