/**
 * Following a command's spill file behind the copier thread, into one `SourceView` (the
 * window and the exact totals). The copier publishes how many bytes are in the file and
 * how many newlines it counted in them (copier-thread.ts); the follower reads from the
 * file only what the window can still keep (decision 087):
 * - until the view is full, everything, in reads of up to 1 MiB into one scratch buffer;
 * - then, for a tail view, only the last `maxBytes + 1 KiB` of what was added since the
 *   last look, and 3 bytes before them (an unfinished character's start); the range
 *   before is taken by length and the copier's newline count (`SourceView.skipFull`);
 *   a head view reads nothing more but the last byte.
 * It looks every `LOOK_MS` while the file grows, and after a pause that doubles up to
 * 50 ms while it does not.
 */
import type { OutputPolicy } from "../../src/core/output/index.ts";
import type { CopyTotals } from "./copier-thread.ts";
import { NewlineCounter } from "./newline-counter.ts";
import { SourceView } from "./source-view.ts";
import type { SpillFile } from "./spill-file.ts";

/** Reads per turn of the event loop before the host yields, while the view is not full. */
const READS_PER_TURN = 8;
/**
 * What a full tail view is given as a copy beyond its byte cap: more than the view's own
 * slack (16 bytes), so that what is skipped before it can never be kept.
 */
const TAIL_COPY_SLACK_BYTES = 1024;
/** Between two looks while the file grows, once the view is full (updates are paced at 10/s). */
const LOOK_MS = 10;
/** Longest pause between two looks at a file that did not grow. */
const MAX_FOLLOW_PAUSE_MS = 50;

interface SpillFollowerOptions {
  spill: SpillFile;
  policy: OutputPolicy;
  /** What the copier has put in the file so far. */
  totals(): CopyTotals;
  /** Whether the command has exited and the copier ended (the file is then read to the end). */
  exited(): boolean;
  /** After every look that fed the view. */
  grew(): void;
  /** The command exited and its output was read to the end. */
  drained(): void;
}

/**
 * @example
 * const follower = new SpillFollower({ spill, policy, totals, exited, grew, drained });
 * follower.follow(); // again at the exit, then `drained` once the file is read
 */
export class SpillFollower {
  /** The window and totals of what was read. */
  readonly view: SourceView;
  readonly #o: SpillFollowerOptions;
  /** Where each read lands (the view keeps copies of what it retains), with its newline counter. */
  readonly #counter = NewlineCounter.acquire();
  readonly #scratch = this.#counter.scratch;
  /** Bytes taken from the file so far, and the newlines among them. */
  #bytesSeen = 0;
  #newlinesSeen = 0;
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

  /** Bytes taken from the file so far. */
  get bytesSeen(): number {
    return this.#bytesSeen;
  }

  /**
   * Takes what the copier added since the last look; after the exit, everything, then
   * tells `drained`.
   */
  follow(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#stopped) return;
    // Read before the totals: once both have ended, these totals are the last ones.
    const exited = this.#o.exited();
    const totals = this.#o.totals();
    let grew = false;
    for (let i = 0; i < READS_PER_TURN && this.#bytesSeen < totals.bytes; i++) {
      grew = true;
      if (this.view.truncated) {
        this.#skipTo(totals);
        break;
      }
      this.#readSome(totals);
    }
    if (grew) {
      this.#pauseMs = 1;
      this.#o.grew();
    }
    if (this.#bytesSeen < totals.bytes && !this.view.truncated) {
      setImmediate(() => this.follow());
      return;
    }
    if (exited && this.#bytesSeen >= totals.bytes) {
      this.#o.drained();
      return;
    }
    this.#timer = setTimeout(() => this.follow(), grew ? LOOK_MS : this.#pauseMs);
    this.#timer.unref();
    if (!grew) this.#pauseMs = Math.min(this.#pauseMs * 2, MAX_FOLLOW_PAUSE_MS);
  }

  /**
   * Output is expected soon (a key was typed into the terminal, decision 191): the pause
   * starts again from 1 ms, so the echo is read within a few ms of landing rather than
   * after up to `MAX_FOLLOW_PAUSE_MS`.
   */
  expectOutput(): void {
    if (this.#stopped || this.#timer === null) return;
    this.#pauseMs = 1;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.follow(), 1);
    this.#timer.unref();
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

  /** A view that is not full yet: the next bytes, all of them, up to the scratch buffer's size. */
  #readSome(totals: CopyTotals): void {
    const available = totals.bytes - this.#bytesSeen;
    const length = Math.min(available, this.#scratch.length);
    const n = this.#read(this.#bytesSeen, length);
    if (n === 0) return;
    // A read up to the copier's totals takes its count; only a partial read counts here.
    const newlines =
      n === available ? totals.newlines - this.#newlinesSeen : this.#counter.count(0, n);
    this.#take(n, newlines);
    // Decoded or dropped during the push (the view cuts a chunk larger than its window).
    this.view.push(this.#scratch.subarray(0, n), newlines);
  }

  /** A full view: skip to the bytes the window can still keep, by the copier's count. */
  #skipTo(totals: CopyTotals): void {
    const { policy } = this.#o;
    const added = totals.bytes - this.#bytesSeen;
    const addedNewlines = Math.max(0, totals.newlines - this.#newlinesSeen);
    const back =
      policy.retain === "head" ? 0 : Math.min(added, policy.maxBytes + TAIL_COPY_SLACK_BYTES);
    const front = added - back;
    // The front's last (up to 3) bytes, then the back, in one read.
    // A full head view reads no back: only the totals and the last byte change.
    const lead = Math.min(front, 3);
    const n = this.#read(totals.bytes - lead - back, lead + back);
    const bytes = this.#scratch.subarray(0, n);
    // The copier counted the range, and the view only sums counts: with the whole range
    // read, its count goes with the front (or the back when nothing is skipped) and
    // nothing is counted again. Only a short read is counted here.
    const counted = n === lead + back ? null : this.#counter.count(lead, n - lead);
    if (front > 0) {
      const frontNewlines = counted === null ? addedNewlines : addedNewlines - counted;
      this.view.skipFull(front, Math.max(0, frontNewlines), bytes.subarray(0, lead));
    }
    if (back > 0) {
      const backNewlines = counted ?? (front > 0 ? 0 : addedNewlines);
      this.view.push(Buffer.from(bytes.subarray(lead)), backNewlines);
    }
    this.#take(front + (n - lead), front > 0 ? addedNewlines : (counted ?? addedNewlines));
  }

  #take(bytes: number, newlines: number): void {
    this.#bytesSeen += bytes;
    this.#newlinesSeen += newlines;
  }

  /** Reads `length` bytes at `position` into the start of the scratch buffer. */
  #read(position: number, length: number): number {
    return this.#o.spill.read(this.#scratch.subarray(0, length), position);
  }
}

/** Frees a copy's memory now, by detaching the `ArrayBuffer` it owns alone. */
function freeChunk(chunk: Uint8Array): void {
  const buffer = chunk.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (chunk.byteOffset === 0 && buffer.byteLength === chunk.byteLength) buffer.transfer?.(0);
}
