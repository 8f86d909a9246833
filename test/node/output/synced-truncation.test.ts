import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { track } from "../../../src/core/chord/index.ts";
import {
  copyTruncation,
  emptyOutputState,
  type ToolOutputState,
  TRUNCATION_KEYS,
  type Truncation,
  truncationError,
} from "../../../src/core/output/index.ts";
import { SyncedTruncation } from "../../../src/core/output/synced-truncation.ts";

const start: Truncation = {
  truncated: false,
  truncatedBy: null,
  totalLines: 0,
  totalBytes: 0,
  outputLines: 0,
  outputBytes: 0,
  maxLines: 2000,
  maxBytes: 51_200,
  lastLinePartial: false,
  firstLineExceedsLimit: false,
};

/** Mostly valid totals near each other, sometimes one field of the wrong kind. */
const candidate = fc.record(
  {
    truncated: fc.oneof(fc.boolean(), fc.constantFrom<unknown>(0, "yes")),
    truncatedBy: fc.constantFrom<unknown>(null, "lines", "bytes", "chars"),
    totalLines: fc.oneof(fc.nat(3), fc.constantFrom<unknown>(-1, 1.5, "2")),
    totalBytes: fc.nat(3),
    outputLines: fc.nat(3),
    outputBytes: fc.oneof(fc.nat(3), fc.constant<unknown>(Number.NaN)),
    maxLines: fc.constantFrom(2000),
    maxBytes: fc.constantFrom(51_200, 51_201),
    lastLinePartial: fc.boolean(),
    firstLineExceedsLimit: fc.boolean(),
    spillPath: fc.constantFrom<unknown>(undefined, "a.log", "b.log", 7),
  },
  { requiredKeys: ["truncated", "totalLines", "maxLines"] },
);

describe("SyncedTruncation", () => {
  it("refuses a non-object with truncationError's message", () => {
    const synced = new SyncedTruncation(start);
    expect(() => synced.stage(null, "capture(meta)")).toThrow(
      truncationError(null, "capture(meta)")?.message as string,
    );
  });

  it("reads each field once, so a getter cannot pass the check and commit another value", () => {
    const synced = new SyncedTruncation(start);
    const t = track<ToolOutputState>(emptyOutputState(start));
    t.flush();
    let reads = 0;
    const sly = {
      ...start,
      get totalLines() {
        reads++;
        return reads === 1 ? 5 : -1;
      },
    };
    expect(synced.stage(sly, "capture(meta)")).toBe(1);
    synced.commit(t);
    expect(reads).toBe(1);
    expect(t.state.truncation.totalLines).toBe(5);
  });
});

describe("SyncedTruncation property", () => {
  it("throws exactly what truncationError says, else writes only the moved fields and holds the copy", () => {
    fc.assert(
      fc.property(fc.array(candidate, { minLength: 1, maxLength: 30 }), (updates) => {
        const synced = new SyncedTruncation(start);
        const t = track<ToolOutputState>(emptyOutputState(start));
        t.flush();
        let held = start;
        for (const u of updates) {
          const expected = truncationError(u, "capture(meta)");
          if (expected) {
            expect(() => synced.stage(u, "capture(meta)")).toThrow(expected.message);
            expect(t.dirty).toBe(false);
          } else {
            const next = copyTruncation(u as unknown as Truncation);
            const moved = TRUNCATION_KEYS.filter((k) => held[k] !== next[k]);
            expect(synced.stage(u, "capture(meta)")).toBe(moved.length);
            synced.commit(t);
            expect(t.flush().map((op) => op[1])).toEqual(moved.map((k) => ["truncation", k]));
            expect(t.state.truncation).toEqual(next);
            held = next;
          }
          expect(synced.toTruncation()).toEqual(held);
          expect(synced.spillPath).toBe(held.spillPath);
        }
      }),
      { seed: 1616, numRuns: 2000 },
    );
  });
});
