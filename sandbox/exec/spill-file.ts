import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";

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
 */
export class SpillFile {
  /** Absolute path of the file. */
  readonly path: string;
  private fd: number | null = null;
  private failed: Error | null = null;
  private readonly onError: (err: Error) => void;

  /**
   * @example const spill = new SpillFile(abs, (e) => fail(e));
   */
  constructor(filePath: string, onError: (err: Error) => void) {
    this.path = filePath;
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
    mkdirSync(path.dirname(this.path), { recursive: true });
    this.fd = openSync(this.path, "w");
    return this.fd;
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    queueMicrotask(() => this.onError(err));
  }
}
