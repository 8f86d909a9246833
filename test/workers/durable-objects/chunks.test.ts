import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromChunks, toChunks } from "../../../durable-objects/invocation/output/chunks.ts";

describe("chunks", () => {
  it("round-trips any JSON value through pieces of any size, each within the bound", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 64 }), (value, max) => {
        const chunks = toChunks(value, max);
        for (const chunk of chunks) expect(chunk.byteLength).toBeLessThanOrEqual(max);
        expect(chunks.reduce((n, c) => n + c.byteLength, 0)).toBe(
          new TextEncoder().encode(JSON.stringify(value)).length,
        );
        expect(fromChunks(chunks)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { seed: 40, numRuns: 2000 },
    );
  });

  it("cuts inside multi-byte characters and still joins them exactly", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 200 }),
        fc.integer({ min: 1, max: 7 }),
        (text, max) => {
          expect(fromChunks(toChunks(text, max))).toBe(text);
        },
      ),
      { seed: 41, numRuns: 2000 },
    );
  });
});
