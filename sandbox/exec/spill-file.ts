import { closeSync, constants, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";

/**
 * The spill path is not one the host will write: it leads out of the workspace or is
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
 * Write-only, created if missing, never through a symlink as the last component
 * (ELOOP), and without blocking on a planted FIFO (ENXIO when it has no reader). Not
 * O_TRUNC: the file is truncated only once it is known to be a plain file of its own.
 */
const OPEN_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The complete raw byte stream of one exec, on disk, in arrival order. Opened lazily
 * by the first `write`.
 *
 * Writes are synchronous, like `cat`'s: each pipe chunk is in the file before the next
 * chunk is read, so the host buffers nothing and the command blocks on its full pipe
 * whenever the disk is slower than it (backpressure without pausing). Writing into the
 * page cache costs tens of microseconds per chunk; the asynchronous alternative (a
 * `WriteStream` on the thread pool) spent a quarter more CPU per byte on handing work
 * to threads and held up to 1 MiB (decision 036). A write error is reported once via
 * `onError`; later writes are refused.
 *
 * The file is confined to the workspace (decision 030): its directory is created level
 * by level inside the root, and the file itself must be a regular file with one link,
 * opened without following a symlink. Otherwise `onError` gets a `SpillRefusedError`.
 */
export class SpillFile {
  /** Absolute path of the file. */
  readonly path: string;
  private readonly workspace: Workspace;
  private fd: number | null = null;
  private failed: Error | null = null;
  private readonly onError: (err: Error) => void;

  /**
   * @example const spill = new SpillFile(abs, workspace, (e) => fail(e));
   */
  constructor(filePath: string, workspace: Workspace, onError: (err: Error) => void) {
    this.path = filePath;
    this.workspace = workspace;
    this.onError = onError;
  }

  /** True once the file has been opened (the first write happened). */
  get opened(): boolean {
    return this.fd !== null;
  }

  /** Appends all of `bytes`; false when the file has failed (the bytes are not kept). */
  write(bytes: Uint8Array): boolean {
    if (this.failed) return false;
    try {
      const fd = this.fd ?? this.open();
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
      return true;
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
  }

  /** Closes the file; rejects when a write failed, so the caller reports incomplete output. */
  async close(): Promise<void> {
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      try {
        closeSync(fd);
      } catch (err) {
        this.failed ??= err as Error;
      }
    }
    if (this.failed) throw this.failed;
  }

  private open(): number {
    const rel = this.workspace.relative(this.path);
    let dir: string;
    try {
      dir = this.workspace.makeDirectorySync(path.dirname(this.path));
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
    ftruncateSync(fd);
    this.fd = fd;
    return fd;
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    queueMicrotask(() => this.onError(err));
  }
}
