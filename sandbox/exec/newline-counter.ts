import { countNewlines } from "./newlines.ts";

/**
 * sandbox/exec/newlines.wat compiled (wabt 1.0.37, `wat2wasm --enable-simd`), 246 bytes:
 * `count(ptr, len)` compares 16 bytes at a time with "\n" (i8x16.eq), sums the matches
 * per byte lane for up to 255 blocks, then widens them into four 32-bit lanes.
 */
const WASM =
  "AGFzbQEAAAABBwFgAn9/AX8DAgEABQMBABEHEgIGbWVtb3J5AgAFY291bnQAAArFAQHCAQMCfwJ7AX8gACABaiECAkADQCAAQRBqIAJLDQEgAEHwH2ohAyADIAJBD2tLBEAgAkEPayEDC/0MAAAAAAAAAAAAAAAAAAAAACEEA0AgBCAA/QAEAEEK/Q/9I/1xIQQgAEEQaiEAIAAgA0kNAAsgBSAE/X39f/2uASEFDAALCyAF/RsAIAX9GwFqIAX9GwIgBf0bA2pqIQYCQANAIAAgAk8NASAALQAAQQpGBEAgBkEBaiEGCyAAQQFqIQAMAAsLIAYL";

/** Bytes of the reused read buffer (the module's memory is 17 pages: 1 MiB and a spare page). */
export const SCRATCH_BYTES = 1 << 20;

/** Counters kept for reuse: enough for a few runs at a time, 1 MiB each. */
const IDLE_COUNTERS = 2;

interface CounterExports {
  memory: WebAssembly.Memory;
  count(ptr: number, len: number): number;
}

/** The compiled module, once; null where WebAssembly SIMD is missing. */
let simd: WebAssembly.Module | null | undefined;

/** Node's WebAssembly constructors (the Workers typings this project also loads declare them abstract). */
const Wasm = WebAssembly as unknown as {
  Module: new (bytes: Uint8Array) => WebAssembly.Module;
  Instance: new (module: WebAssembly.Module) => WebAssembly.Instance;
};

/** The compiled counter, for the copier thread; null where WebAssembly SIMD is missing. */
export function counterModule(): WebAssembly.Module | null {
  return simdModule();
}

function simdModule(): WebAssembly.Module | null {
  if (simd === undefined) {
    try {
      simd = new Wasm.Module(Buffer.from(WASM, "base64"));
    } catch {
      simd = null; // no WebAssembly SIMD here: count in JavaScript
    }
  }
  return simd;
}

/**
 * A 1 MiB buffer that reads land in, and a newline counter over it: WebAssembly SIMD
 * where available (0.08 s per GB of `y\n`, against 0.65 s for `countNewlines`,
 * measured), `countNewlines` otherwise. The buffer is the module's own memory, so
 * counting copies nothing (decision 084).
 * @example const c = new NewlineCounter(); const n = readSync(fd, c.scratch); c.count(0, n);
 */
export class NewlineCounter {
  /** Counters given back by finished runs, for the next ones (at most `IDLE_COUNTERS`). */
  static readonly #idle: NewlineCounter[] = [];

  /**
   * A counter no run is using: a returned one when there is one. Each holds 1 MiB that a
   * run touches all of, and a new one per exec stayed resident until a full GC, which a
   * host that allocates little rarely runs: +1 MiB per exec (decision 085).
   */
  static acquire(): NewlineCounter {
    return NewlineCounter.#idle.pop() ?? new NewlineCounter();
  }

  /** Gives `counter` back once its run will not read into its buffer again. */
  static release(counter: NewlineCounter): void {
    const idle = NewlineCounter.#idle;
    if (idle.length < IDLE_COUNTERS && !idle.includes(counter)) idle.push(counter);
  }

  readonly scratch: Buffer;
  readonly #count: ((ptr: number, len: number) => number) | null;

  constructor() {
    const compiled = simdModule();
    if (compiled) {
      const exports = new Wasm.Instance(compiled).exports as unknown as CounterExports;
      this.scratch = Buffer.from(exports.memory.buffer, 0, SCRATCH_BYTES);
      this.#count = exports.count;
    } else {
      this.scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
      this.#count = null;
    }
  }

  /** "\n" bytes in `scratch[from, from + length)`. */
  count(from: number, length: number): number {
    if (this.#count) return this.#count(from, length);
    return countNewlines(this.scratch.subarray(from, from + length));
  }
}
