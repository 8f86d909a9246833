import { opendir } from "node:fs/promises";
import type { LsResult } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { openInside } from "./open-inside.ts";

/**
 * pi's `ls` on the host: a directory's entries, dotfiles included, sorted as pi sorts
 * them (case-insensitively), `/` after directories, the first `limit`. The directory is
 * opened and its descriptor checked before it is listed (`openInside`). Entry kinds come
 * from the listing itself, not from following links: a symlink shows as a plain name,
 * so nothing outside the workspace is looked at.
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
  const names: string[] = [];
  try {
    for await (const entry of await opendir(`/proc/self/fd/${handle.fd}`)) {
      names.push(entry.isDirectory() ? `${entry.name}/` : entry.name);
    }
  } finally {
    await handle.close();
  }
  names.sort((a, b) => bare(a).toLowerCase().localeCompare(bare(b).toLowerCase()));
  return { path: rel || ".", entries: names.slice(0, limit), total: names.length };
}

function bare(entry: string): string {
  return entry.endsWith("/") ? entry.slice(0, -1) : entry;
}
