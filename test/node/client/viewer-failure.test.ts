import { describe, expect, it } from "vitest";
import { ToolwireError } from "../../../src/client/index.ts";
import { describeFailure } from "../../../src/client/viewer/failure-message.ts";

const expired = new ToolwireError(
  "unauthorized",
  "the subscribe token has expired; get fresh links with GET /v1/invocations/:id/links (toolwire link <id>)",
  401,
);

describe("the viewer's failure box", () => {
  it("says how to get a new link when the link expired", () => {
    const text = describeFailure(expired, "call_42");
    expect(text).toContain("This link has expired");
    expect(text).toContain("Ask for a new one with toolwire link call_42, or from your agent.");
    expect(text).not.toContain("subscribe token");
    expect(text).not.toContain("POST");
  });

  it("still says how when the toolCallId is not known yet", () => {
    expect(describeFailure(expired, null)).toContain("Ask for a new one with toolwire link <id>");
  });

  it("shows other problems as the server put them", () => {
    const other = new ToolwireError("forbidden", "the token is for another invocation", 403);
    expect(describeFailure(other, "c")).toBe(
      "Cannot follow this invocation: the token is for another invocation",
    );
  });
});
