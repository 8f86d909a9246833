import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { byteRange } from "../../../sandbox/byte-range.ts";

describe("byteRange", () => {
  it("no header, or one that is not a byte range, is the whole file", () => {
    expect(byteRange(undefined, 10)).toEqual({ kind: "whole" });
    expect(byteRange("items=0-1", 10)).toEqual({ kind: "whole" });
    expect(byteRange("bytes=5-2", 10)).toEqual({ kind: "whole" });
    expect(byteRange("bytes=-", 10)).toEqual({ kind: "whole" });
  });

  it("one byte, the last byte, and the first byte past the end", () => {
    expect(byteRange("bytes=0-0", 10)).toEqual({ kind: "part", start: 0, end: 0 });
    expect(byteRange("bytes=9-9", 10)).toEqual({ kind: "part", start: 9, end: 9 });
    expect(byteRange("bytes=9-", 10)).toEqual({ kind: "part", start: 9, end: 9 });
    expect(byteRange("bytes=10-", 10)).toEqual({ kind: "unsatisfiable" });
    expect(byteRange("bytes=10-10", 10)).toEqual({ kind: "unsatisfiable" });
  });

  it("an end past the file is cut to its last byte; suffixes count from the end", () => {
    expect(byteRange("bytes=4-99", 10)).toEqual({ kind: "part", start: 4, end: 9 });
    expect(byteRange("bytes=-3", 10)).toEqual({ kind: "part", start: 7, end: 9 });
    expect(byteRange("bytes=-10", 10)).toEqual({ kind: "part", start: 0, end: 9 });
    expect(byteRange("bytes=-11", 10)).toEqual({ kind: "part", start: 0, end: 9 });
    expect(byteRange("bytes=-0", 10)).toEqual({ kind: "unsatisfiable" });
  });

  it("an empty file satisfies no range", () => {
    expect(byteRange("bytes=0-0", 0)).toEqual({ kind: "unsatisfiable" });
    expect(byteRange("bytes=-1", 0)).toEqual({ kind: "unsatisfiable" });
    expect(byteRange(undefined, 0)).toEqual({ kind: "whole" });
  });

  it("a list of ranges is told apart", () => {
    expect(byteRange("bytes=0-1,4-5", 10)).toEqual({ kind: "multiple" });
  });

  it("every served part lies inside the file and inside what was asked", () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1200), fc.nat(1200), (size, a, b) => {
        const r = byteRange(`bytes=${a}-${b}`, size);
        if (r.kind === "part") {
          expect(r.start).toBe(a);
          expect(r.end).toBe(Math.min(b, size - 1));
          expect(r.end).toBeLessThan(size);
          expect(r.start).toBeLessThanOrEqual(r.end);
        } else if (r.kind === "unsatisfiable") {
          expect(a >= size && a <= b).toBe(true);
        } else {
          expect(r.kind).toBe("whole");
          expect(b).toBeLessThan(a);
        }
      }),
      { seed: 12, numRuns: 2000 },
    );
  });
});
