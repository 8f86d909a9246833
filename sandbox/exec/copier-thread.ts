/**
 * The copier between a command's output pipe and its spill file, on a thread of its own
 * (decision 087): blocking reads of the pipe, each appended to the file at once (as
 * `cat` does), its newlines counted in WebAssembly SIMD while the bytes are still in the
 * cache, and the running totals published in shared memory. The main thread never reads
 * what the window will not keep: it reads the totals, and from the file only the bytes
 * the window needs (spill-follower.ts).
 *
 * The thread's code is `copierMain` below, run from its own source text: a function
 * with no imports and no closures, so that the same code works under Node's TypeScript
 * loader, Vitest and the one-file bundle without a second entry file.
 */
import { closeSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { counterModule } from "./newline-counter.ts";

/** Idle threads kept for the next execs. */
const IDLE_THREADS = 2;

/**
 * The copy's state, `flags[1]`: the thread may take output; `stop` was called; the
 * thread is between a read and the totals it publishes for it. `stop` takes effect only
 * outside that span, so the totals it reports are always the file's.
 */
const TAKING = 0;
const STOPPED = 1;
const WRITING = 2;
/** How soon `stop` looks again while the thread finishes a write, doubling up to the most. */
const STOP_RETRY_MS = 1;
const MAX_STOP_RETRY_MS = 50;

/** One exec's descriptors: the thread reads `readFd` and writes `spillFd`. */
interface CopyJob {
  /** The pipe's read end (blocking); the host closes it when the job ends. */
  readFd: number;
  /** The spill file (appending); the host closes it after the end. */
  spillFd: number;
  /** Bytes past this are not written; the thread then stops reading (the command gets EPIPE). */
  maxBytes: number;
}

/** How copying ended. */
export interface CopyEnd {
  /**
   * `eof`: every writer is gone and everything is in the file. `cap`: `maxBytes` reached.
   * `file-limit`: a write met the host's own file size limit (EFBIG). `disk-full`: the
   * spill's file system had no room left (ENOSPC, EDQUOT). `error`: a read or write
   * failed otherwise (`message`). `stopped`: `stop` was called. In every ending the
   * totals count exactly the bytes in the file, a short write before a failure included.
   */
  reason: "eof" | "cap" | "file-limit" | "disk-full" | "error" | "stopped";
  message?: string;
  /**
   * The job's last totals, taken as it ended: the thread may run another exec's job
   * right after, so `totals()` no longer describes this one.
   */
  totals: CopyTotals;
}

/** Bytes in the file so far and the newlines among them, a consistent pair. */
export interface CopyTotals {
  bytes: number;
  newlines: number;
}

/** A copier thread; `CopierThread.acquire()` gives an idle one or starts one. */
export class CopierThread {
  static readonly #idle: CopierThread[] = [];

  /** An idle thread, or a new one. */
  static acquire(): CopierThread {
    return CopierThread.#idle.pop() ?? new CopierThread();
  }

  readonly #worker: Worker;
  /** [sequence (odd while the thread writes the totals), state (TAKING, STOPPED, WRITING)]. */
  readonly #flags: Int32Array;
  /** [bytes, newlines]. */
  readonly #totals: Float64Array;
  #onEnd: ((end: CopyEnd) => void) | null = null;
  #readFd: number | null = null;
  /** Which job this is (a `stop` retried later must not stop the next one). */
  #job = 0;

  private constructor() {
    const shared = new SharedArrayBuffer(8 + 16);
    this.#flags = new Int32Array(shared, 0, 2);
    this.#totals = new Float64Array(shared, 8, 2);
    this.#worker = new Worker(`(${copierMain.toString()})()`, {
      eval: true,
      workerData: { shared, module: counterModule() },
    });
    this.#worker.on("message", (end: Omit<CopyEnd, "totals">) => this.#ended(end));
    this.#worker.on("error", (err) => this.#ended({ reason: "error", message: err.message }));
    // After the listeners (adding one refs the thread again): an idle copier thread must
    // not keep the host's process alive; a running job does (`run`).
    this.#worker.unref();
  }

  /** Starts copying `job`; `onEnd` is called once, on the main thread. */
  run(job: CopyJob, onEnd: (end: CopyEnd) => void): void {
    if (this.#onEnd) throw new Error("copier thread is busy");
    this.#onEnd = onEnd;
    this.#job++;
    this.#readFd = job.readFd;
    this.#worker.ref();
    Atomics.store(this.#flags, 1, TAKING);
    this.#totals[0] = 0;
    this.#totals[1] = 0;
    this.#worker.postMessage(job);
  }

  /** The totals the thread has written so far. */
  totals(): CopyTotals {
    for (;;) {
      const before = Atomics.load(this.#flags, 0);
      const bytes = this.#totals[0]!;
      const newlines = this.#totals[1]!;
      if (before % 2 === 0 && Atomics.load(this.#flags, 0) === before) return { bytes, newlines };
    }
  }

  /**
   * Stops taking output (the thread writes nothing more and ends at the pipe's next
   * data or EOF); `onEnd` is told `stopped` as soon as the thread is not amid a write,
   * with the totals of everything in the file. (Told at once, a write under way went
   * into the file after the totals were taken: the file was one read ahead.)
   */
  stop(): void {
    this.#stopBetweenWrites(this.#job, STOP_RETRY_MS);
  }

  /** Stops job `job` once the thread is not amid a write, looking again after `retryMs` (doubling). */
  #stopBetweenWrites(job: number, retryMs: number): void {
    // Only this job: by the next look it may have ended, and the thread run another's.
    if (!this.#onEnd || this.#job !== job) return;
    const state = Atomics.compareExchange(this.#flags, 1, TAKING, STOPPED);
    if (state === WRITING) {
      const next = Math.min(retryMs * 2, MAX_STOP_RETRY_MS);
      setTimeout(() => this.#stopBetweenWrites(job, next), retryMs);
      return;
    }
    this.#ended({ reason: "stopped" }, false);
  }

  #ended(end: Omit<CopyEnd, "totals">, threadDone = true): void {
    const onEnd = this.#onEnd;
    this.#onEnd = null;
    this.#worker.unref();
    if (onEnd) onEnd({ ...end, totals: this.totals() });
    if (!threadDone) return;
    // The host opened the read end and closes it (a thread closing another's descriptor
    // gets a warning): a command that still writes then gets EPIPE. Only once the thread
    // has let go of it: closed under a thread still reading (after `stop`), its number
    // went to the next exec's pipe, and this thread copied that exec's output.
    if (this.#readFd !== null) closeSync(this.#readFd);
    this.#readFd = null;
    if (CopierThread.#idle.length < IDLE_THREADS) CopierThread.#idle.push(this);
    else void this.#worker.terminate();
  }
}

/**
 * The thread's code. Runs on its own (from its source text): everything it uses comes
 * from `workerData`, `process.getBuiltinModule` and its own locals.
 */
function copierMain(): void {
  const fs = process.getBuiltinModule("node:fs");
  const { parentPort, workerData } = process.getBuiltinModule("node:worker_threads");
  const { shared, module } = workerData as {
    shared: SharedArrayBuffer;
    module: WebAssembly.Module | null;
  };
  const flags = new Int32Array(shared, 0, 2);
  const totals = new Float64Array(shared, 8, 2);
  const SIZE = 1 << 20;
  let buffer: Uint8Array;
  let count: (ptr: number, len: number) => number;
  if (module) {
    const Instance = WebAssembly.Instance as unknown as new (
      m: WebAssembly.Module,
    ) => {
      exports: { memory: { buffer: ArrayBuffer }; count(ptr: number, len: number): number };
    };
    const exports = new Instance(module).exports;
    buffer = new Uint8Array(exports.memory.buffer, 0, SIZE);
    count = exports.count;
  } else {
    // No WebAssembly SIMD: a byte loop.
    buffer = new Uint8Array(SIZE);
    count = (ptr, len) => {
      let n = 0;
      for (let i = ptr; i < ptr + len; i++) if (buffer[i] === 10) n++;
      return n;
    };
  }

  interface Job {
    readFd: number;
    spillFd: number;
    maxBytes: number;
  }

  function publish(bytes: number, newlines: number): void {
    Atomics.add(flags, 0, 1);
    totals[0] = bytes;
    totals[1] = newlines;
    Atomics.add(flags, 0, 1);
  }

  // The same values as TAKING, STOPPED and WRITING outside (this code has no closures).
  const taking = 0;
  const writing = 2;

  /** Why a write failed, as the copy's ending. */
  function failed(err: unknown): { reason: string; message?: string } {
    const code = (err as { code?: string }).code;
    if (code === "EFBIG") return { reason: "file-limit" };
    if (code === "ENOSPC" || code === "EDQUOT") return { reason: "disk-full" };
    return { reason: "error", message: (err as Error).message };
  }

  function copy(job: Job): { reason: string; message?: string } {
    let written = 0;
    let newlines = 0;
    publish(0, 0);
    for (;;) {
      const n = fs.readSync(job.readFd, buffer, 0, SIZE, null);
      if (n === 0) return { reason: "eof" };
      if (Atomics.compareExchange(flags, 1, taking, writing) !== taking) {
        return { reason: "stopped" };
      }
      const take = Math.min(n, job.maxBytes - written);
      let done = 0;
      let failure: { reason: string; message?: string } | null = null;
      try {
        while (done < take) {
          try {
            done += fs.writeSync(job.spillFd, buffer, done, take - done, null);
          } catch (err) {
            // What a short write put in the file before the failure is counted too.
            failure = failed(err);
            break;
          }
        }
        newlines += count(0, done);
        written += done;
        publish(written, newlines);
      } finally {
        Atomics.store(flags, 1, taking);
      }
      if (failure) return failure;
      if (take < n) return { reason: "cap" };
    }
  }

  parentPort!.on("message", (job: Job) => {
    let end: { reason: string; message?: string };
    try {
      end = copy(job);
    } catch (err) {
      end = { reason: "error", message: (err as Error).message };
    }
    parentPort!.postMessage(end);
  });
}
