import { describe, expect, it } from "vitest";
import {
  formatCount,
  formatSize,
  formatTruncationFooter,
} from "../../../src/core/output/footer.ts";
import type { Truncation } from "../../../src/core/output/types.ts";
import { TextWindow } from "../../../src/core/output/window.ts";

const base: Truncation = {
  truncated: true,
  truncatedBy: "bytes",
  totalLines: 34000,
  totalBytes: 2_000_000,
  outputLines: 2000,
  outputBytes: 51000,
  maxLines: 2000,
  maxBytes: 51200,
  lastLinePartial: false,
  firstLineExceedsLimit: false,
  spillPath: "/spill/1.log",
};

describe("formatTruncationFooter", () => {
  it("names the tail's exact line range, the byte limit and the spill file", () => {
    expect(formatTruncationFooter(base, { retain: "tail" })).toBe(
      "[Showing lines 32,001–34,000 of 34,000 (50 KB limit). Full output: /spill/1.log]",
    );
  });

  it("claims no total when the totals are lower bounds", () => {
    const t = { ...base, truncatedBy: "lines" as const, spillPath: undefined };
    expect(formatTruncationFooter(t, { retain: "tail", totalsExact: false })).toBe(
      "[Showing the last 2,000 lines.]",
    );
    expect(
      formatTruncationFooter(t, {
        retain: "head",
        totalsExact: false,
        recovery: "Use offset=2001.",
      }),
    ).toBe("[Showing lines 1–2,000. Use offset=2001.]");
  });

  it("describes a partial last line in tail mode", () => {
    const w = new TextWindow({ retain: "tail", maxBytes: 2048, maxLines: 10 });
    w.append(`a\n${"x".repeat(5000)}`);
    expect(formatTruncationFooter(w.truncation(), { retain: "tail" })).toBe(
      "[Showing the last 2 KB of line 2 (2 KB limit).]",
    );
  });

  it("describes head cuts by lines, by bytes mid-line, and an over-long first line", () => {
    const lines = new TextWindow({ retain: "head", maxBytes: 1000, maxLines: 2 });
    lines.append("a\nb\nc\n");
    expect(formatTruncationFooter(lines.truncation(), { retain: "head" })).toBe(
      "[Showing lines 1–2 of 3.]",
    );
    const bytes = new TextWindow({ retain: "head", maxBytes: 4, maxLines: 9 });
    bytes.append("ab\ncdef\n");
    expect(formatTruncationFooter(bytes.truncation(), { retain: "head" })).toBe(
      "[Showing lines 1–2 of 2 (4 B limit); line 2 is cut short.]",
    );
    const first = new TextWindow({ retain: "head", maxBytes: 3, maxLines: 9 });
    first.append("abcdef\n");
    expect(formatTruncationFooter(first.truncation(), { retain: "head" })).toBe(
      "[Line 1 is over the 3 B limit; showing its first 3 B.]",
    );
  });

  it("is empty when nothing was cut", () => {
    expect(formatTruncationFooter({ ...base, truncated: false }, { retain: "tail" })).toBe("");
  });
});

describe("formatCount and formatSize", () => {
  it("group thousands and use binary units", () => {
    expect([formatCount(0), formatCount(999), formatCount(1000), formatCount(1234567)]).toEqual([
      "0",
      "999",
      "1,000",
      "1,234,567",
    ]);
    expect([formatSize(1023), formatSize(1024), formatSize(1536), formatSize(51200)]).toEqual([
      "1023 B",
      "1 KB",
      "1.5 KB",
      "50 KB",
    ]);
    expect(formatSize(1024 * 1024)).toBe("1 MB");
  });
});
