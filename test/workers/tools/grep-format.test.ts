// What grep shows the model and what it hands pi's renderer, from the host's answer:
// pi's `path-N- text` context lines around `path:N: text`, the notice for each of the
// two stops, and pi's detail names.
import { describe, expect, it } from "vitest";
import type { GrepResult } from "../../../src/execenv/index.ts";
import { formatGrep, grepAnswer } from "../../../src/tools/grep.ts";

const base: GrepResult = {
  matches: [],
  truncated: false,
  omitted: { kind: "none" },
  engine: "ripgrep",
  stoppedBy: null,
  cutLines: 0,
};

describe("grep's answer", () => {
  it("draws each match's block in pi's format, one after the other", () => {
    const r: GrepResult = {
      ...base,
      matches: [
        {
          path: "a.ts",
          line: 3,
          text: "hit one",
          before: [{ line: 2, text: "b" }],
          after: [{ line: 4, text: "hit two" }],
        },
        {
          path: "a.ts",
          line: 4,
          text: "hit two",
          before: [{ line: 3, text: "hit one" }],
          after: [],
        },
      ],
    };
    expect(grepAnswer(r)).toBe(
      "a.ts-2- b\na.ts:3: hit one\na.ts-4- hit two\na.ts-3- hit one\na.ts:4: hit two",
    );
  });

  it("the limit's stop: the notice, and matchLimitReached for pi", () => {
    const r: GrepResult = {
      ...base,
      matches: [{ path: "a.ts", line: 1, text: "hit" }],
      truncated: true,
      omitted: { kind: "atLeast", count: 1 },
      stoppedBy: "limit",
    };
    expect(grepAnswer(r, 1)).toEqual({
      text: "a.ts:1: hit\n\n[Showing the first 1 match. More matches were omitted. Narrow the pattern, path or glob, or raise limit (at most 10000).]",
      details: { matchLimitReached: 1 },
    });
  });

  it("the line cap's stop says to lower context, and is not the match limit", () => {
    const r: GrepResult = {
      ...base,
      matches: [{ path: "a.ts", line: 1, text: "hit", before: [], after: [] }],
      truncated: true,
      omitted: { kind: "atLeast", count: 1 },
      stoppedBy: "lines",
    };
    expect(grepAnswer(r, 100)).toBe(
      "a.ts:1: hit\n\n[Showing the first 1 match. More matches were omitted. The answer reached 10000 lines with context; lower context, or narrow the pattern, path or glob.]",
    );
  });

  it("a line cut to the preview cap is pi's linesTruncated", () => {
    const r: GrepResult = {
      ...base,
      matches: [{ path: "a.ts", line: 1, text: "hit…" }],
      cutLines: 1,
    };
    expect(grepAnswer(r)).toEqual({ text: "a.ts:1: hit…", details: { linesTruncated: true } });
    expect(formatGrep(base)).toBe("No matches found.");
  });
});
