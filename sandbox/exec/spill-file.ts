import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import path from "node:path";
import { finished } from "node:stream/promises";

/**
 * Bytes the spill file may buffer before `write` asks the caller to pause. Large enough
 * that reading the pipes and writing the disk overlap (Node's 16 KiB default made every
 * 64 KiB pipe chunk wait for the disk), small enough to keep memory flat
 * (decision 032).
 */
const SPILL_BUFFER_BYTES = 1024 * 1024;

/**
 * The complete raw byte stream of one exec, on disk, in arrival order. Opened lazily
 * by the first `write`. `write` returns false when the caller must pause its sources
 * until `onDrain` fires (backpressure); a write error is reported once via `onError`.
 */
export class SpillFile {
  /** Absolute path of the file. */
  readonly path: string;
  private stream: WriteStream | null = null;
  private failed: Error | null = null;
  private readonly onDrain: () => void;
  private readonly onError: (err: Error) => void;

  /**
   * @example const spill = new SpillFile(abs, () => resume(), (e) => fail(e));
   */
  constructor(filePath: string, onDrain: () => void, onError: (err: Error) => void) {
    this.path = filePath;
    this.onDrain = onDrain;
    this.onError = onError;
  }

  /** True once the file has been opened (the first write happened). */
  get opened(): boolean {
    return this.stream !== null;
  }

  /** Appends `bytes`; false means "pause until onDrain". */
  write(bytes: Uint8Array): boolean {
    if (this.failed) return false;
    const stream = this.stream ?? this.open();
    return stream ? stream.write(bytes) : false;
  }

  /** Flushes and closes; resolves when every byte is on disk, rejects on a write error. */
  async close(): Promise<void> {
    if (this.failed) throw this.failed;
    const stream = this.stream;
    if (!stream) return;
    stream.end();
    await finished(stream);
    if (this.failed) throw this.failed;
  }

  private open(): WriteStream | null {
    try {
      mkdirSync(path.dirname(this.path), { recursive: true });
    } catch (err) {
      this.fail(err as Error);
      return null;
    }
    const stream = createWriteStream(this.path, { flags: "w", highWaterMark: SPILL_BUFFER_BYTES });
    stream.on("drain", () => this.onDrain());
    stream.on("error", (err) => this.fail(err));
    this.stream = stream;
    return stream;
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    queueMicrotask(() => this.onError(err));
  }
}
