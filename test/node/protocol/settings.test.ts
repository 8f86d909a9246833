import { describe, expect, it } from "vitest";
import { durationMs } from "../../../src/protocol/index.ts";

describe("durationMs", () => {
  it("reads seconds, fractions rounded to whole milliseconds", () => {
    expect(durationMs("60", 1800)).toBe(60_000);
    expect(durationMs("0.001", 1800)).toBe(1);
    expect(durationMs(" 2 ", 1800)).toBe(2000);
  });

  it("falls back for a missing, empty, non-numeric, zero or negative setting", () => {
    for (const raw of [undefined, "", " ", "abc", "0", "-1", "Infinity", "NaN"]) {
      expect(durationMs(raw, 1800), String(raw)).toBe(1_800_000);
    }
  });

  it("keeps zero when allowed, in the unit given", () => {
    const days = { unitMs: 86_400_000, allowZero: true };
    expect(durationMs("0", 7, days)).toBe(0);
    expect(durationMs("2", 7, days)).toBe(172_800_000);
    expect(durationMs("-1", 7, days)).toBe(604_800_000);
    expect(durationMs("", 7, days)).toBe(604_800_000);
  });
});
