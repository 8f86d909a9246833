import { describe, expect, it } from "vitest";
import {
  describeOmitted,
  formatRetentionNotice,
  Omitted,
} from "../../../src/core/retention/index.ts";

const match = { one: "match", other: "matches" };

describe("describeOmitted", () => {
  it("prints a number only for an exact count", () => {
    expect(describeOmitted(Omitted.exact(25), "item")).toBe("Omitted 25 items.");
    expect(describeOmitted(Omitted.exact(1), "item")).toBe("Omitted 1 item.");
    expect(describeOmitted(Omitted.exact(2), match)).toBe("Omitted 2 matches.");
  });

  it("never claims a count for a lower bound or an unknown amount", () => {
    expect(describeOmitted(Omitted.atLeast(1), "item")).toBe("More items were omitted.");
    expect(describeOmitted(Omitted.atLeast(500), match)).toBe("More matches were omitted.");
    expect(describeOmitted(Omitted.atLeast(500), match)).not.toMatch(/\d/);
    expect(describeOmitted(Omitted.unknown(), "line")).toBe("Some lines may have been omitted.");
  });

  it("says nothing when nothing was omitted", () => {
    expect(describeOmitted(Omitted.none(), "item")).toBe("");
    expect(describeOmitted(Omitted.exact(0), "item")).toBe("");
  });

  it("refuses counts that are not non-negative integers", () => {
    expect(() => Omitted.exact(-1)).toThrow(
      /Omitted\.exact: count must be a non-negative integer, got -1/,
    );
    expect(() => Omitted.atLeast(0.5)).toThrow(/Omitted\.atLeast: .* got 0\.5/);
  });
});

describe("formatRetentionNotice", () => {
  it("appends the tool's own recovery words", () => {
    expect(
      formatRetentionNotice(
        { omitted: Omitted.atLeast(1), unit: match, shown: { count: 100, from: "head" } },
        "Narrow the pattern or raise limit.",
      ),
    ).toBe(
      "Showing the first 100 matches. More matches were omitted. Narrow the pattern or raise limit.",
    );
    expect(
      formatRetentionNotice(
        { omitted: Omitted.exact(1500), unit: "line", shown: { count: 2000, from: "tail" } },
        "  Use read with offset to see earlier lines. ",
      ),
    ).toBe(
      "Showing the last 2000 lines. Omitted 1500 lines. Use read with offset to see earlier lines.",
    );
  });

  it("works without a shown count or recovery words", () => {
    expect(formatRetentionNotice({ omitted: Omitted.exact(3), unit: "byte" })).toBe(
      "Omitted 3 bytes.",
    );
  });

  it("is empty, advice included, when nothing was omitted", () => {
    expect(
      formatRetentionNotice(
        { omitted: Omitted.none(), unit: "item", shown: { count: 3, from: "head" } },
        "Raise limit.",
      ),
    ).toBe("");
  });
});
