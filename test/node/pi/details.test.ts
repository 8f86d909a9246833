// The details the pi extension hands pi, drawn by pi-coding-agent 0.73.1's own grep
// renderer: Toolwire's grep details become pi's match-limit and cut-lines warnings.
import { createGrepToolDefinition } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { ToolOutputState } from "../../../src/client/index.ts";
import { piDetails } from "../../../src/pi/details.ts";

const NOT_CUT: ToolOutputState["truncation"] = {
  truncated: false,
  truncatedBy: null,
  totalLines: 1,
  totalBytes: 12,
  outputLines: 1,
  outputBytes: 12,
  maxLines: 10_004,
  maxBytes: 51_200,
  lastLinePartial: false,
  firstLineExceedsLimit: false,
};

/** What pi's grep renderer draws for a result, without colours. */
function drawn(text: string, details: unknown): string {
  const plain = { fg: (_colour: string, s: string) => s, bold: (s: string) => s };
  const view = createGrepToolDefinition(process.cwd()).renderResult?.(
    { content: [{ type: "text", text }], details: details as never },
    { expanded: false, isPartial: false },
    plain as never,
    { lastComponent: undefined, showImages: false } as never,
  );
  return (view?.render(120) ?? []).map((l) => l.trimEnd()).join("\n");
}

describe("pi's grep details from Toolwire's grep", () => {
  it("the match limit and cut lines become pi's warnings", () => {
    const text = "a.ts:1: hit";
    const details = piDetails("grep", {
      content: [{ type: "text", text }],
      details: { matchLimitReached: 1, linesTruncated: true },
      truncation: NOT_CUT,
    });
    expect(details).toEqual({ matchLimitReached: 1, linesTruncated: true });
    expect(drawn(text, details)).toContain("[Truncated: 1 matches limit, some lines truncated]");
  });

  it("a complete grep has no details and no warning", () => {
    const text = "a.ts:1: hit";
    const details = piDetails("grep", {
      content: [{ type: "text", text }],
      details: {},
      truncation: NOT_CUT,
    });
    expect(details).toBeUndefined();
    expect(drawn(text, details)).not.toContain("Truncated");
  });

  it("other tools do not take grep's fields", () => {
    const state = {
      content: [{ type: "text" as const, text: "x" }],
      details: { matchLimitReached: 1, linesTruncated: true },
      truncation: NOT_CUT,
    };
    expect(piDetails("find", state)).toBeUndefined();
    expect(piDetails("read", state)).toBeUndefined();
  });
});
