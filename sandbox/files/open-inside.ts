import { constants } from "node:fs";
import { type FileHandle, open, readlink } from "node:fs/promises";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";

export type Opened = "file" | "directory";

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
        403,
        "forbidden",
        `path '${shown(rel)}' resolves (through a symlink) outside the workspace root; name a path inside it`,
      );
    }
    const info = await handle.stat();
    if (kind === "file" && info.isDirectory()) {
      throw new SandboxError(
        400,
        "bad_request",
        `'${shown(rel)}' is a directory; list it with glob`,
      );
    }
    if (kind === "file" && !info.isFile()) {
      throw new SandboxError(400, "bad_request", `'${shown(rel)}' is not a regular file`);
    }
    if (kind === "file" && info.nlink > 1) {
      throw new SandboxError(
        403,
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

/**
 * A path error as the caller's fault, naming only the path as given: ENAMETOOLONG,
 * ELOOP, ENOTDIR and friends are 400s, ENOENT a 404, EACCES a 403. Anything else is
 * rethrown (a real host error).
 * @example throw pathError(err, "a/b.txt");
 */
export function pathError(err: unknown, rel: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const what = `'${shown(rel)}'`;
  switch (code) {
    case "ENOENT":
      return new SandboxError(
        404,
        "not_found",
        `${what} does not exist in the workspace; list files with glob`,
      );
    case "ENAMETOOLONG":
      return new SandboxError(
        400,
        "bad_request",
        `path ${what} is too long: each name may have at most 255 bytes, the whole path 4096`,
      );
    case "ELOOP":
      return new SandboxError(
        400,
        "bad_request",
        `path ${what} has too many levels of symbolic links`,
      );
    case "ENOTDIR":
      return new SandboxError(
        400,
        "bad_request",
        `path ${what} goes through something that is not a directory`,
      );
    case "EACCES":
    case "EPERM":
      return new SandboxError(403, "forbidden", `${what} is not readable by the sandbox host`);
    case "ENXIO":
    case "ENODEV":
      return new SandboxError(400, "bad_request", `${what} is not a regular file`);
    default:
      return err;
  }
}

/** The path as echoed back in a message: at most 120 characters. */
function shown(rel: string): string {
  return rel.length > 120 ? `${rel.slice(0, 117)}...` : rel;
}
