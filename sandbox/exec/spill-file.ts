import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  unlinkSync,
} from "node:fs";
import path from "node:path";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";

/**
 * The spill path is not one the host will use: it leads out of the workspace or is
 * not a plain file of its own. Exec ids are predictable, so a command can plant
 * anything at the path before the host opens it.
 */
export class SpillRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SpillRefusedError";
  }
}

/**
 * Write-only and appending, created if missing, never through a symlink as the last
 * component (ELOOP), and without blocking on a planted FIFO (ENXIO when it has no
 * reader). Not O_TRUNC: the file is truncated only once it is known to be a plain file
 * of its own.
 */
const OPEN_FLAGS =
  constants.O_WRONLY |
  constants.O_APPEND |
  constants.O_CREAT |
  constants.O_NOFOLLOW |
  constants.O_NONBLOCK;

/**
 * The complete raw output of one exec, on disk: the copier thread (copier-thread.ts)
 * appends the command's output pipe to it through the descriptor `open` returns
 * (O_APPEND). The host follows the file through a second descriptor (`read`) to keep
 * the window and the totals, and removes the file at the end when the output fit the
 * window (decisions 084, 086).
 *
 * The file is confined to the workspace (decision 030): its directory is created level
 * by level inside the root, and the file itself must be a regular file with one link,
 * opened without following a symlink. Otherwise `open` throws a `SpillRefusedError`.
 * The host keeps reading its own descriptor, so a command that renames or replaces the
 * path later changes nothing the host reads.
 */
export class SpillFile {
  /** Absolute path of the file. */
  readonly path: string;
  readonly #workspace: Workspace;
  #writeFd: number | null = null;
  #readFd: number | null = null;
  #dir: string | null = null;

  /** @example const spill = new SpillFile(abs, workspace); const fd = spill.open(); */
  constructor(filePath: string, workspace: Workspace) {
    this.path = filePath;
    this.#workspace = workspace;
  }

  /** Creates (or empties) the file and returns the descriptor the command writes to. */
  open(): number {
    const rel = this.#workspace.relative(this.path);
    let dir: string;
    try {
      dir = this.#workspace.makeDirectorySync(path.dirname(this.path));
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      throw new SpillRefusedError(`${err.message}; it cannot hold ${rel}`);
    }
    let fd: number;
    try {
      fd = openSync(path.join(dir, path.basename(this.path)), OPEN_FLAGS, 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw new SpillRefusedError(`${rel} is a symbolic link`);
      if (code === "ENXIO") throw new SpillRefusedError(`${rel} is a FIFO or a device`);
      throw err;
    }
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.nlink !== 1) {
      closeSync(fd);
      const what = stat.isFile() ? `a hard link (${stat.nlink} names)` : "not a regular file";
      throw new SpillRefusedError(`${rel} is ${what}`);
    }
    // Only a file that holds something is emptied: on ext4, truncating a file to 0 (even
    // an empty one) arms "replace via truncate", and whoever closes it last then waits
    // for the allocation of every block written: 0.4-0.55 s per GB, measured, paid by
    // the command at its exit (decision 085).
    if (stat.size > 0) ftruncateSync(fd);
    this.#writeFd = fd;
    this.#readFd = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY);
    this.#dir = dir;
    return fd;
  }

  /** Reads into `buffer` from `position`; 0 at the current end of the file. */
  read(buffer: Uint8Array, position: number): number {
    if (this.#readFd === null) return 0;
    return readSync(this.#readFd, buffer, 0, buffer.length, position);
  }

  /**
   * Closes the host's descriptors; with `keep` false, removes the file, provided its
   * path still names the file the host created (the command may have replaced it).
   */
  close(keep: boolean): void {
    // The write descriptor is the copier's until now: it ended before the exec does.
    if (this.#writeFd !== null) closeSync(this.#writeFd);
    this.#writeFd = null;
    const fd = this.#readFd;
    if (fd === null) return;
    const ours = fstatSync(fd);
    closeSync(fd);
    this.#readFd = null;
    if (keep || this.#dir === null) return;
    try {
      const dir = realpathSync(this.#dir);
      if (!this.#workspace.contains(dir)) return;
      const file = path.join(dir, path.basename(this.path));
      const now = lstatSync(file);
      if (now.ino === ours.ino && now.dev === ours.dev) unlinkSync(file);
    } catch {}
  }
}
