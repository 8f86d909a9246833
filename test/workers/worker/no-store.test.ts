import { describe, expect, it } from "vitest";
import { mintSubscribeToken } from "../../../src/worker/index.ts";
import { call, create, freshId, postJson, SUBSCRIBE_SECRET } from "./helpers.ts";

/** Every answer below carries invocation state or a token: none may be cached. */
async function expectNoStore(res: Response, label: string): Promise<void> {
  expect(res.headers.get("Cache-Control"), `${label} (${res.status})`).toBe("no-store");
  await res.body?.cancel();
}

describe("Cache-Control: no-store on answers carrying invocation state", () => {
  it("is sent on create, view, result (200 and 202), cancel and output, with the bearer or a token", async () => {
    const toolCallId = freshId("nostore");
    const res = await postJson("/v1/invocations", {
      tool: "external",
      args: { name: "x" },
      toolCallId,
    });
    expect(res.status).toBe(201);
    await expectNoStore(res, "create (201)");
    await expectNoStore(
      await postJson("/v1/invocations", { tool: "external", args: { name: "x" }, toolCallId }),
      "create again (200)",
    );
    const created = await create({ tool: "external", args: { name: "y" } });
    const sub = `?token=${created.subscribeToken}`;
    const base = `/v1/invocations/${created.id}`;
    await expectNoStore(await call(base), "view, bearer");
    await expectNoStore(await call(`${base}${sub}`, {}, false), "view, token");
    const running = await call(`${base}/result${sub}`, {}, false);
    expect(running.status).toBe(202);
    await expectNoStore(running, "result 202");
    await expectNoStore(await postJson(`${base}/output`, { calls: [{ write: "a\n" }] }), "output");
    await expectNoStore(await call(`${base}/cancel`, { method: "POST" }), "cancel");
    const settled = await call(`${base}/result${sub}`, {}, false);
    expect(settled.status).toBe(200);
    await expectNoStore(settled, "result 200");
  });

  it("is sent on the event stream and on every refusal of the socket (426, 401, 403, 404)", async () => {
    const created = await create({ tool: "external", args: { name: "z" } });
    const base = `/v1/invocations/${created.id}`;
    const sub = `?token=${created.subscribeToken}`;
    const events = await call(`${base}/events${sub}`, {}, false);
    expect(events.headers.get("Content-Type")).toContain("text/event-stream");
    await expectNoStore(events, "events");
    const other = await mintSubscribeToken(SUBSCRIBE_SECRET, "someone-else", Date.now());
    const refusals: [string, RequestInit, number][] = [
      [`${base}/socket${sub}`, {}, 426],
      [`${base}/socket?token=garbage`, { headers: { Upgrade: "websocket" } }, 401],
      [`${base}/socket?token=${other}`, { headers: { Upgrade: "websocket" } }, 403],
      [
        `/v1/invocations/${freshId("missing")}/socket`,
        { headers: { Upgrade: "websocket", Authorization: "Bearer test-api-token" } },
        404,
      ],
    ];
    for (const [path, init, status] of refusals) {
      const res = await call(path, init, false);
      expect(res.status).toBe(status);
      await expectNoStore(res, `socket refusal ${status}`);
    }
  });
});
