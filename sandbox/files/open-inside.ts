import { constants } from "node:fs";
import { type FileHandle, open, readlink } from "node:fs/promises";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { pathError, shown } from "./path-error.ts";

type Opened = "file" | "directory";

/**
 * Opens `abs` (a path inside the workspace, `rel` as the caller named it) and checks the
 * opened descriptor, not the path: its real location (`/proc/self/fd/N`) must lie inside
 * the workspace, and a file must be a regular file with one name. Checking after opening
 * leaves no window between check and use, so a symlink swapped meanwhile by a command
 * cannot lead the read outside (decision 082). O_NONBLOCK keeps a planted FIFO from
 * blocking the host. Path errors are 400/403/404 that name only `rel`.
 * @example const handle = await openInside(ws, abs, "src/a.ts", "file");
 */
export async function openInside(
  workspace: Workspace,
  abs: string,
  rel: string,
  kind: Opened,
): Promise<FileHandle> {
  const flags =
    constants.O_RDONLY | constants.O_NONBLOCK | (kind === "directory" ? constants.O_DIRECTORY : 0);
  let handle: FileHandle;
  try {
    handle = await open(abs, flags);
  } catch (err) {
    throw pathError(err, rel);
  }
  try {
    const real = await readlink(`/proc/self/fd/${handle.fd}`);
    if (!workspace.contains(real)) {
      throw new SandboxError(
        "forbidden",
        `path '${shown(rel)}' resolves (through a symlink) outside the workspace root; name a path inside it`,
      );
    }
    const info = await handle.stat();
    if (kind === "file" && info.isDirectory()) {
      throw new SandboxError("bad_request", `'${shown(rel)}' is a directory; list it with glob`);
    }
    if (kind === "file" && !info.isFile()) {
      throw new SandboxError("bad_request", `'${shown(rel)}' is not a regular file`);
    }
    if (kind === "file" && info.nlink > 1) {
      throw new SandboxError(
        "forbidden",
        `'${shown(rel)}' is a hard link (${info.nlink} names), and another name may lie outside the workspace; the host reads only files with one name (cat it with bash, which runs in the jail)`,
      );
    }
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
