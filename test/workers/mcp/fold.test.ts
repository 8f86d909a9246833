import { describe, expect, it } from "vitest";
import type { SettledResult } from "../../../src/core/output/types.ts";
import { exitOf, foldResult, META_KEY } from "../../../src/mcp/fold.ts";

const truncation = {
  truncated: false,
  truncatedBy: null,
  totalLines: 1,
  totalBytes: 8,
  outputLines: 1,
  outputBytes: 8,
  maxLines: 2000,
  maxBytes: 51200,
  lastLinePartial: false,
  firstLineExceedsLimit: false,
} as const;

function settled(over: Partial<SettledResult>): SettledResult {
  return {
    content: [{ type: "text", text: "partial\n" }],
    details: {},
    terminate: false,
    isError: false,
    truncation: { ...truncation },
    ...over,
  };
}

describe("the MCP fold of a settled invocation", () => {
  it("says how the call ended, with the exit code and signal the tool recorded", () => {
    expect(exitOf(settled({}), false)).toEqual({ status: "completed" });
    expect(exitOf(settled({ isError: true, details: { exitCode: 3 } }), false)).toEqual({
      status: "failed",
      exitCode: 3,
    });
    expect(
      exitOf(settled({ isError: true, details: { exitCode: null, signal: "SIGTERM" } }), true),
    ).toEqual({
      status: "cancelled",
      exitCode: null,
      signal: "SIGTERM",
    });
    for (const limit of ["timeout", "idleTimeout"] as const) {
      const details = { exitCode: null, signal: "SIGTERM", stoppedBy: limit };
      expect(exitOf(settled({ isError: true, details }), false)).toEqual({
        status: "timeout",
        limit,
        exitCode: null,
        signal: "SIGTERM",
      });
    }
    // A cancel that came first is a cancel; an unknown stoppedBy is no limit.
    const late = { exitCode: null, stoppedBy: "timeout" };
    expect(exitOf(settled({ isError: true, details: late }), true).status).toBe("cancelled");
    const odd = { exitCode: null, stoppedBy: "boredom" };
    expect(exitOf(settled({ isError: true, details: odd }), false).status).toBe("failed");
    expect(exitOf(settled({ details: ["not", "an", "object"] }), false)).toEqual({
      status: "completed",
    });
  });

  it("is the text block and images, then the viewer link; totals and ids as data", () => {
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const result = foldResult(
      "call_1",
      settled({
        content: [{ type: "text", text: "out\n" }, image],
        isError: true,
        details: { exitCode: 3 },
      }),
      false,
      { viewUrl: "https://w.example/view/call_1?token=t", subscribeToken: "t" },
    );
    expect(result.content.map((c) => c.type)).toEqual(["text", "image", "resource_link"]);
    expect(result.content[2]).toMatchObject({
      uri: "https://w.example/view/call_1?token=t",
      mimeType: "text/html",
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      invocationId: "call_1",
      truncation,
      exit: { status: "failed", exitCode: 3 },
    });
    expect(result._meta).toEqual({
      [META_KEY]: { id: "call_1", viewUrl: "https://w.example/view/call_1?token=t" },
    });
  });
});
