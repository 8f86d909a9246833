import { describe, expect, it } from "vitest";
import { type JsonValue, MAX_JSON_DEPTH } from "../../../src/core/chord/index.ts";
import { call, create, expectError, freshId, postJson, viewWhen } from "./helpers.ts";

/** Arrays nested `levels` deep around 0. */
function nested(levels: number): JsonValue {
  let v: JsonValue = 0;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

interface View {
  status: string;
  state: { content: { text?: string }[]; details: JsonValue };
}

async function viewOf(id: string): Promise<View> {
  const res = await call(`/v1/invocations/${id}`);
  expect(res.status).toBe(200);
  return res.json();
}

describe("JSON nesting depth through the API (MAX_JSON_DEPTH = 64)", () => {
  it("creates an external call whose args reach the cap (input 63 levels inside them), refuses one level more", async () => {
    for (const levels of [MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1]) {
      await create({
        tool: "external",
        args: { name: "deep", input: nested(levels) },
        toolCallId: freshId("depth-ok"),
      });
    }
    const id = freshId("depth-over");
    const res = await postJson("/v1/invocations", {
      tool: "external",
      args: { name: "deep", input: nested(MAX_JSON_DEPTH) },
      toolCallId: id,
    });
    expect(await expectError(res, 400, "bad_request")).toMatch(/body\.args.*at most 64 levels/);
    await expectError(await call(`/v1/invocations/${id}`), 404, "not_found");
  });

  it("refuses the reviewer's 3,600-deep args for any tool with a 400", async () => {
    const res = await postJson("/v1/invocations", {
      tool: "web_fetch",
      args: { url: "https://example.com", extra: nested(3_600) },
      toolCallId: freshId("depth-any"),
    });
    expect(await expectError(res, 400, "bad_request")).toContain("at most 64 levels");
  });

  it("accepts details at 62 and 63 levels, refuses 64, 3,600 levels and a 65-segment path; nothing changes and the call still ends normally", async () => {
    const { id } = await create({
      tool: "external",
      args: { name: "deep-details" },
      toolCallId: freshId("depth-details"),
    });
    const output = (body: unknown) => postJson(`/v1/invocations/${id}/output`, body);
    for (const levels of [MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1]) {
      const res = await output({
        calls: [{ write: `${levels}\n` }, { details: [["r", nested(levels)]] }],
      });
      expect(res.status, await res.text()).toBe(200);
    }
    const before = await viewWhen<View>(
      id,
      (v) => v.state.content[0]?.text === `${MAX_JSON_DEPTH - 2}\n${MAX_JSON_DEPTH - 1}\n`,
    );
    expect(before.state.details).toEqual(nested(MAX_JSON_DEPTH - 1));

    // details sits one level inside the output state, so 64 levels of details is 65 in all.
    const atDetails = await output({
      calls: [{ write: "no" }, { details: [["r", nested(MAX_JSON_DEPTH)]] }],
    });
    expect(await expectError(atDetails, 400, "bad_request")).toMatch(
      /more than 63 levels deep.*at most 64/,
    );
    const reviewer = await output({ calls: [{ details: [["r", nested(3_600)]] }] });
    expect(await expectError(reviewer, 400, "bad_request")).toContain("at most 64 levels");
    const longPath = await output({
      calls: [{ details: [["d", new Array<number>(MAX_JSON_DEPTH + 1).fill(0)]] }],
    });
    expect(await expectError(longPath, 400, "bad_request")).toContain(
      "the path has 65 segments; the limit is 64",
    );
    expect(await viewOf(id)).toEqual(before);

    const end = await output({ calls: [{ write: "done\n" }], end: { isError: false } });
    expect(end.status, await end.text()).toBe(200);
    const result = await call(`/v1/invocations/${id}/result?wait=5`);
    expect(result.status).toBe(200);
    expect(await result.json()).toMatchObject({
      isError: false,
      details: nested(MAX_JSON_DEPTH - 1),
      content: [{ type: "text", text: `${MAX_JSON_DEPTH - 2}\n${MAX_JSON_DEPTH - 1}\ndone\n` }],
    });
  });
});
