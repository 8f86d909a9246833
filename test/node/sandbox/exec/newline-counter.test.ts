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
