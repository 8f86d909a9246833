import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextQueue, utf8ByteLength } from "../../../src/core/retention/index.ts";

const piece = fc.constantFrom("a", "bc", "\n", "é", "€", "😀", "xyz\n", "");

describe("TextQueue", () => {
  it("drops from the front and measures what went, like slicing one string (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(piece, { maxLength: 6 }), fc.nat(12), fc.nat(12)), {
          maxLength: 30,
        }),
        (steps) => {
          const q = new TextQueue();
          let model = "";
          for (const [pieces, units, bytes] of steps) {
            for (const p of pieces) q.push(p);
            model += pieces.join("");
            // Drop by units, never inside a pair (the queue's callers never do).
            let n = Math.min(units, model.length);
            if (q.splitsPair(n)) n--;
            const gone = model.slice(0, n);
            expect(q.drop(n)).toEqual({
              units: n,
              bytes: utf8ByteLength(gone),
              newlines: gone.split("\n").length - 1,
            });
            model = model.slice(n);
            // Drop by bytes: the fewest whole characters that reach `bytes`.
            const cut = q.dropBytes(bytes);
            const removed = model.slice(0, cut.units);
            expect(cut.bytes).toBe(utf8ByteLength(removed));
            if (cut.units < model.length) expect(cut.bytes).toBeGreaterThanOrEqual(bytes);
            model = model.slice(cut.units);
            expect(q.text()).toBe(model);
          }
        },
      ),
      { seed: 5, numRuns: 1500 },
    );
  });

  it("knows when an index falls inside a surrogate pair, across chunks too", () => {
    const q = new TextQueue();
    q.push("a😀");
    q.push("b");
    expect(q.splitsPair(2)).toBe(true);
    expect(q.splitsPair(1)).toBe(false);
    expect(q.splitsPair(3)).toBe(false);
    q.drop(1);
    expect(q.splitsPair(1)).toBe(true);
    q.clear();
    expect(q.text()).toBe("");
  });
});
