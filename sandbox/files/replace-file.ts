import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { openInside } from "./open-inside.ts";
import { pathError } from "./path-error.ts";

/** Where a file is written: its folder's real path inside the workspace and its name there. */
interface FileTarget {
  /** Real path of the folder (may not exist yet). */
  dir: string;
  name: string;
  /** The path as the caller named it, for messages. */
  rel: string;
}

/**
 * Where writing `rel` lands. A symlink at `rel` (or on the way) is followed, and where
 * it leads must lie inside the workspace (`Workspace.resolve`), so writing a link
 * changes the file it names, as a local write would.
 * @example await fileTarget(ws, "src/a.ts") // { dir: "/abs/ws/src", name: "a.ts", rel: "src/a.ts" }
 */
export async function fileTarget(workspace: Workspace, rel: string): Promise<FileTarget> {
  const abs = await workspace.resolve(rel);
  if (abs === workspace.root) {
    throw new SandboxError("bad_request", "path names the workspace root; name a file in it");
  }
  let real = abs;
  try {
    real = await realpath(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw pathError(err, rel);
    // Missing: the folder part may still go through symlinks, which resolve() checked.
    const info = await lstat(abs).catch(() => null);
    if (info?.isSymbolicLink()) {
      throw new SandboxError(
        "bad_request",
        `'${rel}' is a symlink to a file that does not exist; write to the path it names instead`,
      );
    }
    real = path.join(await realFolder(workspace, path.dirname(abs)), path.basename(abs));
  }
  if (!workspace.contains(real)) {
    throw new SandboxError(
      "forbidden",
      `path '${rel}' resolves (through a symlink) outside the workspace root; name a path inside it`,
    );
  }
  return { dir: path.dirname(real), name: path.basename(real), rel };
}

/** Real path of folder `abs`, or of its deepest existing ancestor joined with the rest. */
async function realFolder(workspace: Workspace, abs: string): Promise<string> {
  const missing: string[] = [];
  for (let current = abs; ; current = path.dirname(current)) {
    try {
      return path.join(await realpath(current), ...missing.reverse());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || current === workspace.root) throw err;
      missing.push(path.basename(current));
    }
  }
}

/**
 * Replaces the file at `target` with `content` atomically: the bytes go to a temporary
 * file in the same folder, which is then renamed over the name, so a reader sees the old
 * file or the new one, never part of one. Missing parent folders are created, each
 * checked inside the workspace before the next (`Workspace.makeDirectorySync`). The
 * folder is opened and its descriptor checked (`openInside`); the temporary file and the
 * rename go through that descriptor (`/proc/self/fd/N/name`), so a folder swapped for a
 * symlink meanwhile cannot lead the write outside. An existing file keeps its mode;
 * a hard link's other names keep the old content (the name is replaced, not the inode).
 * @example await replaceFile(ws, await fileTarget(ws, "a.txt"), Buffer.from("hi\n"))
 */
export async function replaceFile(
  workspace: Workspace,
  target: FileTarget,
  content: Uint8Array,
): Promise<void> {
  let dirReal: string;
  try {
    dirReal = workspace.makeDirectorySync(target.dir);
  } catch (err) {
    if (err instanceof SandboxError) throw err;
    throw pathError(err, target.rel);
  }
  const folder = await openInside(
    workspace,
    dirReal,
    workspace.relative(dirReal) || ".",
    "directory",
  );
  try {
    const here = `/proc/self/fd/${folder.fd}`;
    const destination = `${here}/${target.name}`;
    const existing = await lstat(destination).catch(() => null);
    if (existing && !existing.isFile()) {
      const what = existing.isDirectory() ? "a directory" : "not a regular file";
      throw new SandboxError("bad_request", `'${target.rel}' is ${what}; write a file path`);
    }
    const temporary = `${here}/.${target.name}.${randomBytes(6).toString("hex")}.toolwire-tmp`;
    const mode = existing ? existing.mode & 0o7777 : 0o644;
    let file: FileHandle;
    try {
      file = await open(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        mode,
      );
    } catch (err) {
      throw pathError(err, target.rel);
    }
    try {
      await file.writeFile(content);
      await file.chmod(mode);
    } catch (err) {
      await file.close();
      await unlink(temporary).catch(() => {});
      throw err;
    }
    await file.close();
    await rename(temporary, destination).catch(async (err) => {
      await unlink(temporary).catch(() => {});
      throw pathError(err, target.rel);
    });
  } finally {
    await folder.close();
  }
}
