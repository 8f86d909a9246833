/**
 * Following a command's spill file: what the command appended is read behind it, in
 * order, into one `SourceView` (the window and the exact totals), a few MiB per turn;
 * when the file has not grown it looks again after a pause that doubles up to 50 ms.
 * Reads land in one scratch buffer the view borrows (decision 084).
 */
import type { OutputPolicy } from "../../src/output/index.ts";
import { NewlineCounter } from "./newline-counter.ts";
import { SourceView } from "./source-view.ts";
import type { SpillFile } from "./spill-file.ts";

/** Reads per turn of the event loop before the host yields to other work. */
const READS_PER_TURN = 8;
/**
 * What a full tail view is given as a copy beyond its byte cap: more than the view's own
 * slack (16 bytes), so that the front handed over before it is always released at once.
 */
const TAIL_COPY_SLACK_BYTES = 1024;
/** Longest pause between two looks at a file that did not grow. */
const MAX_FOLLOW_PAUSE_MS = 50;

export interface SpillFollowerOptions {
  spill: SpillFile;
  policy: OutputPolicy;
  /** Output past this many bytes is not read; `capReached` is told once. */
  maxSpillBytes: number;
  /** Whether the command has exited (its output is then read to the end). */
  exited(): boolean;
  /** After every read that fed the view. */
  grew(): void;
  /** The output reached `maxSpillBytes`: nothing more is read. */
  capReached(limit: number): void;
  /** The command exited and its output was read to the end. */
  drained(): void;
}

/**
 * @example
 * const follower = new SpillFollower({ spill, policy, maxSpillBytes, exited, grew, capReached, drained });
 * follower.follow(); // again at the exit, then `drained` once the file is read
 */
export class SpillFollower {
  /** The window and totals of what was read. */
  readonly view: SourceView;
  readonly #o: SpillFollowerOptions;
  /** Where each read lands (the view keeps copies of what it retains), with its newline counter. */
  readonly #counter = NewlineCounter.acquire();
  readonly #scratch = this.#counter.scratch;
  /** Bytes taken from the file so far (at most `maxSpillBytes`). */
  #bytesSeen = 0;
  #capped = false;
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;
  #pauseMs = 1;

  constructor(options: SpillFollowerOptions) {
    this.#o = options;
    // The view's copies are freed the moment it lets go of them (the scratch buffer is not
    // a copy): left to the GC they pile up to ~32 MiB of external memory (decision 037).
    this.view = new SourceView(options.policy, (bytes) => {
      if (bytes.buffer !== this.#scratch.buffer) freeChunk(bytes);
    });
  }

  /** Bytes read from the file so far. */
  get bytesSeen(): number {
    return this.#bytesSeen;
  }

  /**
   * Reads what the command appended since the last look; after the exit, reads to the
   * end and tells `drained`.
   */
  follow(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#stopped) return;
    let grew = false;
    for (let i = 0; i < READS_PER_TURN && !this.#capped; i++) {
      const n = this.#o.spill.read(this.#scratch, this.#bytesSeen);
      if (n === 0) break;
      grew = true;
      this.#onChunk(this.#scratch.subarray(0, n));
    }
    if (grew && !this.#capped) {
      this.#pauseMs = 1;
      setImmediate(() => this.follow());
      return;
    }
    if (this.#o.exited()) {
      this.#o.drained();
      return;
    }
    this.#timer = setTimeout(() => this.follow(), this.#pauseMs);
    this.#timer.unref();
    this.#pauseMs = Math.min(this.#pauseMs * 2, MAX_FOLLOW_PAUSE_MS);
  }

  /** No more looks (the run finished). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * Hands the newline counter (and its scratch buffer) back to the pool once the view
   * has ended: nothing reads into the scratch buffer after that (decision 085).
   */
  release(): void {
    NewlineCounter.release(this.#counter);
  }

  /** Feeds bytes read into the scratch buffer to the view (see `#pushBorrowed`). */
  #onChunk(whole: Buffer): void {
    const limit = this.#o.maxSpillBytes;
    const room = limit - this.#bytesSeen;
    const chunk = whole.length > room ? whole.subarray(0, room) : whole;
    this.#bytesSeen += chunk.length;
    this.#pushBorrowed(chunk.length);
    this.#o.grew();
    if (chunk !== whole) {
      this.#capped = true;
      this.#o.capReached(limit);
    }
  }

  /**
   * Pushes bytes the next read will overwrite. A view that is not full yet, or keeps the
   * head, decodes or drops them at once; a full tail view keeps its last bytes, so it
   * gets the front (released again while this push runs, as the back covers the window)
   * and a copy of the back only. The host copies ~50 KiB per MiB read instead of
   * allocating every read anew (decision 084).
   */
  #pushBorrowed(length: number): void {
    const scratch = this.#scratch;
    const { policy } = this.#o;
    if (!this.view.truncated || policy.retain === "head") {
      this.view.push(0, scratch.subarray(0, length), this.#counter.count(0, length));
      return;
    }
    const back = Math.min(length, policy.maxBytes + TAIL_COPY_SLACK_BYTES);
    const front = length - back;
    if (front > 0) this.view.push(0, scratch.subarray(0, front), this.#counter.count(0, front));
    const copy = Buffer.from(scratch.subarray(front, length));
    this.view.push(0, copy, this.#counter.count(front, back));
  }
}

/** Frees a copy's memory now, by detaching the `ArrayBuffer` it owns alone. */
function freeChunk(chunk: Uint8Array): void {
  const buffer = chunk.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (chunk.byteOffset === 0 && buffer.byteLength === chunk.byteLength) buffer.transfer?.(0);
}
