import { describe, expect, it } from "vitest";
import { create, expectError, postJson } from "./helpers.ts";

describe("POST /v1/invocations/:id/output with seq", { timeout: 20_000 }, () => {
  it("validates seq: an integer from 0 to 2^53 - 1", async () => {
    const created = await create({ tool: "external", args: { name: "x" } });
    const path = `/v1/invocations/${created.id}/output`;
    for (const seq of [-1, 1.5, "0", null, 2 ** 53]) {
      const message = await expectError(
        await postJson(path, { calls: [{ write: "no" }], seq }),
        400,
        "bad_request",
      );
      expect(message).toContain("body.seq");
    }
    // The largest seq passes validation; on a fresh invocation it is a gap.
    const gap = await expectError(
      await postJson(path, { calls: [], seq: Number.MAX_SAFE_INTEGER }),
      409,
      "conflict",
    );
    expect(gap).toContain("the expected seq is 0");
  });

  it("answers a retried body 200 with the same JSON, and a gap 409 naming the expected seq", async () => {
    const created = await create({ tool: "external", args: { name: "x" } });
    const path = `/v1/invocations/${created.id}/output`;
    const first = await postJson(path, { calls: [{ write: "once\n" }], seq: 0 });
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    const retry = await postJson(path, { calls: [{ write: "once\n" }], seq: 0 });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual(firstBody);
    const message = await expectError(
      await postJson(path, { calls: [{ write: "x" }], seq: 2 }),
      409,
      "conflict",
    );
    expect(message).toContain("the expected seq is 1");
    const view = (await (await postJson(path, { calls: [], seq: 1 })).json()) as {
      state: { content: { text: string }[] };
    };
    expect(view.state.content[0]?.text).toBe("once\n");
  });
});
