import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NewlineCounter, SCRATCH_BYTES } from "../../../../sandbox/exec/newline-counter.ts";

function naive(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 10) n++;
  return n;
}

describe("NewlineCounter (WebAssembly SIMD over the read buffer)", () => {
  const counter = new NewlineCounter();

  it("counts exactly what a byte-by-byte loop counts, at any offset and length", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 5000 }).map((a) => a.map((b) => (b % 3 === 0 ? 10 : b))),
        fc.nat(63),
        (bytes, offset) => {
          counter.scratch.set(bytes, offset);
          expect(counter.count(offset, bytes.length)).toBe(naive(bytes));
        },
      ),
      { seed: 1010, numRuns: 500 },
    );
  });

  it("counts a whole buffer of newlines, past the 255-block batches", () => {
    counter.scratch.fill(10);
    expect(counter.count(0, SCRATCH_BYTES)).toBe(SCRATCH_BYTES);
    counter.scratch.fill(0x78);
    expect(counter.count(0, SCRATCH_BYTES)).toBe(0);
  });
});

describe("NewlineCounter.acquire / release", () => {
  it("hands a released counter to the next run, never one still in use, and keeps at most two", () => {
    const a = NewlineCounter.acquire();
    const b = NewlineCounter.acquire();
    // Identity compared as booleans: a failing `toBe` would diff two 1 MiB buffers.
    expect(b === a).toBe(false);
    NewlineCounter.release(a);
    NewlineCounter.release(a); // twice: still handed out once
    const c = NewlineCounter.acquire();
    expect(c === a).toBe(true);
    expect(NewlineCounter.acquire() === a).toBe(false);
    const spare = [a, b, NewlineCounter.acquire()];
    for (const counter of spare) NewlineCounter.release(counter);
    const again = [NewlineCounter.acquire(), NewlineCounter.acquire(), NewlineCounter.acquire()];
    expect(again.filter((counter) => spare.includes(counter))).toHaveLength(2);
    // A reused counter counts what is read into it now, not what the last run left.
    again[0]!.scratch.fill(10, 0, 100);
    again[0]!.scratch.fill(0x78, 100, 200);
    expect(again[0]!.count(100, 100)).toBe(0);
  });
});
