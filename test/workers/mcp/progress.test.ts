import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { latestLine, PROGRESS_MESSAGE_MAX, ProgressTracker } from "../../../src/mcp/progress.ts";
import type { ProgressRead } from "../../../src/protocol/index.ts";

function read(lastLine: string, bytes: number): ProgressRead {
  return { bytes, lines: 0, lastLine };
}

describe("latestLine", () => {
  it("is the last non-empty line, trimmed", () => {
    expect(latestLine("a\nbb\n\n")).toBe("bb");
    expect(latestLine("  one  ")).toBe("one");
    expect(latestLine("x\n   \n\t\n")).toBe("x");
    expect(latestLine("")).toBe("");
    expect(latestLine("\n\n")).toBe("");
  });

  it("keeps a line of exactly the limit, cuts one unit over with an ellipsis", () => {
    const at = "y".repeat(PROGRESS_MESSAGE_MAX);
    expect(latestLine(at)).toBe(at);
    expect(latestLine(`${at}z`)).toBe(`${"y".repeat(PROGRESS_MESSAGE_MAX - 1)}…`);
    expect(latestLine("y".repeat(PROGRESS_MESSAGE_MAX - 1))).toHaveLength(PROGRESS_MESSAGE_MAX - 1);
  });

  it("is never longer than the limit and always the start of the input's last non-empty line", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "b", " ", "\n", "é") }),
        fc.integer({ min: 2, max: 40 }),
        (text, max) => {
          const line = latestLine(text, max);
          expect(line.length).toBeLessThanOrEqual(max);
          const last =
            text
              .split("\n")
              .map((l) => l.trim())
              .filter((l) => l !== "")
              .at(-1) ?? "";
          if (last.length <= max) expect(line).toBe(last);
          else expect(line).toBe(`${last.slice(0, max - 1)}…`);
        },
      ),
      { seed: 9, numRuns: 2000 },
    );
  });
});

describe("ProgressTracker", () => {
  it("sends only reads that brought new bytes, so progress strictly increases", () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1000 }), { maxLength: 50 }), (totals) => {
        const tracker = new ProgressTracker();
        const sent: number[] = [];
        for (const total of totals) {
          const value = tracker.next(read("line", total));
          if (value !== null) sent.push(value.progress);
        }
        for (let i = 1; i < sent.length; i++) expect(sent[i]!).toBeGreaterThan(sent[i - 1]!);
        const max = Math.max(0, ...totals);
        expect(sent.at(-1) ?? 0).toBe(max);
      }),
      { seed: 10, numRuns: 1000 },
    );
  });

  it("carries the latest line as the message, and nothing for a read without new bytes", () => {
    const tracker = new ProgressTracker();
    expect(tracker.next(read("", 0))).toBeNull();
    expect(tracker.next(read("tick 1", 7))).toEqual({ progress: 7, message: "tick 1" });
    expect(tracker.next(read("tick 1", 7))).toBeNull();
    expect(tracker.next(read("tick 2", 14))).toEqual({
      progress: 14,
      message: "tick 2",
    });
  });
});
