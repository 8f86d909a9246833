import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../../src/worker/index.ts";
import {
  authed,
  call,
  create,
  expectError,
  freshId,
  ORIGIN,
  postJson,
  viewWhen,
} from "./helpers.ts";

interface View {
  id: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  status: string;
  state: {
    content: { type: string; text?: string; data?: string; mimeType?: string }[];
    details: unknown;
    usage?: Record<string, number>;
    addedTools?: string[];
    terminate: boolean;
  };
  isError?: boolean;
  cancelled?: boolean;
}

async function view(id: string): Promise<View> {
  const res = await call(`/v1/invocations/${id}`);
  expect(res.status).toBe(200);
  return res.json();
}

describe("POST /v1/invocations", () => {
  it("creates an invocation and returns absolute URLs that carry the subscribe token", async () => {
    const toolCallId = freshId("create");
    const res = await postJson("/v1/invocations", {
      tool: "external",
      args: { name: "lookup", input: { q: 1 } },
      toolCallId,
      runId: "run-1",
      turnId: "turn-1",
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(Object.keys(body).sort()).toEqual(
      [
        "eventsUrl",
        "id",
        "runViewUrl",
        "socketUrl",
        "status",
        "subscribeToken",
        "toolCallId",
        "viewUrl",
      ].sort(),
    );
    // Created with a runId of its own: the run page link (decision 122).
    expect(body.runViewUrl).toMatch(/^http:\/\/toolwire\.test\/run\/run-1\?token=v1\./);
    const token = encodeURIComponent(body.subscribeToken ?? "");
    expect(body).toMatchObject({
      id: toolCallId,
      toolCallId,
      status: "running",
      socketUrl: `ws://toolwire.test/v1/invocations/${toolCallId}/socket?token=${token}`,
      eventsUrl: `${ORIGIN}/v1/invocations/${toolCallId}/events?token=${token}`,
      viewUrl: `${ORIGIN}/view/${toolCallId}?token=${token}`,
    });

    const seen = await view(toolCallId);
    expect(seen).toMatchObject({
      id: toolCallId,
      tool: "external",
      args: { name: "lookup", input: { q: 1 } },
    });
    expect(seen).toMatchObject({
      runId: "run-1",
      turnId: "turn-1",
      sandbox: "default",
      status: "running",
    });

    const byToken = await call(`/v1/invocations/${toolCallId}?token=${token}`, {}, false);
    expect(byToken.status).toBe(200);
  });

  it("generates a toolCallId when none is given", async () => {
    const created = await create({ tool: "external", args: { name: "x" } });
    expect(created.toolCallId).toMatch(/^call_[0-9a-f]{32}$/);
    expect(created.id).toBe(created.toolCallId);
    expect((await view(created.id)).tool).toBe("external");
  });

  it("is idempotent per toolCallId: the same call again is the same invocation (200)", async () => {
    const toolCallId = freshId("idem");
    const body = { tool: "emit", args: { lines: 2, intervalMs: 10 }, toolCallId };
    const first = await create(body);
    const again = await postJson("/v1/invocations", {
      ...body,
      args: { intervalMs: 10, lines: 2 },
    });
    expect(again.status).toBe(200);
    const second = (await again.json()) as Record<string, string>;
    expect(second.id).toBe(first.id);
    const result = await call(`/v1/invocations/${toolCallId}/result?wait=10`);
    expect(result.status).toBe(200);
    const text = ((await result.json()) as { content: { text: string }[] }).content[0]?.text;
    expect(text).toBe("1 line\n2 line\n");
  });

  it("refuses a known toolCallId with another tool or other args (409), changing nothing", async () => {
    const toolCallId = freshId("conflict");
    await create({ tool: "external", args: { name: "a" }, toolCallId });
    const before = await view(toolCallId);
    const otherArgs = await postJson("/v1/invocations", {
      tool: "external",
      args: { name: "b" },
      toolCallId,
    });
    expect(await expectError(otherArgs, 409, "conflict")).toContain(toolCallId);
    const otherTool = await postJson("/v1/invocations", {
      tool: "emit",
      args: { lines: 1 },
      toolCallId,
    });
    await expectError(otherTool, 409, "conflict");
    expect(await view(toolCallId)).toEqual(before);
  });
});

describe("POST /v1/invocations: the same toolCallId on another sandbox", () => {
  // Two configured sandboxes; `external` never reaches a host, so none needs to run.
  const twoSandboxes = {
    ...env,
    SANDBOXES: '{"default":"http://127.0.0.1:8788","gpu":"http://127.0.0.1:8789"}',
  } as Env;

  async function post(body: Record<string, unknown>): Promise<Response> {
    return app.fetch(
      new Request(
        `${ORIGIN}/v1/invocations`,
        authed({
          method: "POST",
          body: JSON.stringify(body),
          headers: { "Content-Type": "application/json" },
        }),
      ),
      twoSandboxes,
    );
  }

  it("is refused (409 naming sandbox) whichever side names the default, changing nothing", async () => {
    for (const [first, second] of [
      [undefined, "gpu"],
      ["gpu", undefined],
      ["gpu", "default"],
    ] as const) {
      const toolCallId = freshId("sandbox-conflict");
      const body = { tool: "external", args: { name: "a" }, toolCallId };
      const created = await post({ ...body, sandbox: first });
      expect(created.status, await created.clone().text()).toBe(201);
      const before = await view(toolCallId);
      const message = await expectError(await post({ ...body, sandbox: second }), 409, "conflict");
      expect(message).toContain(toolCallId);
      expect(message).toContain(`sandbox "${first ?? "default"}"`);
      expect(await view(toolCallId)).toEqual(before);
    }
  });

  it("is the same invocation (200) when the sandbox is the same, the default omitted or named", async () => {
    for (const [first, second] of [
      [undefined, undefined],
      [undefined, "default"],
      ["default", undefined],
      ["gpu", "gpu"],
    ] as const) {
      const toolCallId = freshId("sandbox-same");
      const body = { tool: "external", args: { name: "a" }, toolCallId };
      expect((await post({ ...body, sandbox: first })).status).toBe(201);
      const again = await post({ ...body, sandbox: second });
      expect(again.status, await again.clone().text()).toBe(200);
      expect(((await again.json()) as { id: string }).id).toBe(toolCallId);
    }
  });
});

describe("GET /v1/invocations/:id/result", () => {
  it("answers 202 while running and 200 with the settled result, waking the long-poll on settle", async () => {
    const created = await create({
      tool: "external",
      args: { name: "slow" },
      toolCallId: freshId("poll"),
    });
    const now = await call(`/v1/invocations/${created.id}/result`);
    expect(now.status).toBe(202);
    expect(await now.json()).toEqual({ status: "running" });

    const poll = call(`/v1/invocations/${created.id}/result?wait=30`);
    const ended = await postJson(`/v1/invocations/${created.id}/output`, {
      calls: [{ write: "done" }],
      end: { isError: false },
    });
    expect(ended.status, await ended.clone().text()).toBe(200);
    const settled = await poll;
    expect(settled.status).toBe(200);
    expect(await settled.json()).toMatchObject({
      content: [{ type: "text", text: "done" }],
      isError: false,
      terminate: false,
    });
  });

  it("accepts waits above the cap (clamped to 30 s) and answers with the subscribe token", async () => {
    const created = await create({ tool: "emit", args: { lines: 1 }, toolCallId: freshId("cap") });
    const res = await call(
      `/v1/invocations/${created.id}/result?wait=3600&token=${created.subscribeToken}`,
      {},
      false,
    );
    expect(res.status).toBe(200);
  });
});

describe("POST /v1/invocations?wait=S: the result in the same answer", () => {
  it("answers with the result when the call settles within the wait, and the result route agrees", async () => {
    const toolCallId = freshId("wait-settled");
    const res = await postJson("/v1/invocations?wait=10", {
      tool: "emit",
      args: { lines: 2, intervalMs: 10 },
      toolCallId,
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { status: string; result: unknown; viewUrl: string };
    expect(body.status).toBe("settled");
    expect(body.result).toMatchObject({
      content: [{ type: "text", text: "1 line\n2 line\n" }],
      isError: false,
    });
    expect(body.viewUrl).toContain(`/view/${toolCallId}?token=`);
    const later = await call(`/v1/invocations/${toolCallId}/result`);
    expect(await later.json()).toEqual(body.result);
  });

  it("answers running, with no result, when the call has not settled within the wait; it goes on", async () => {
    const toolCallId = freshId("wait-running");
    const res = await postJson("/v1/invocations?wait=0.3", {
      tool: "external",
      args: { name: "slow" },
      toolCallId,
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.status).toBe("running");
    expect(body).not.toHaveProperty("result");
    const ended = await postJson(`/v1/invocations/${toolCallId}/output`, {
      calls: [{ write: "done" }],
      end: { isError: false },
    });
    expect(ended.status).toBe(200);
    expect((await call(`/v1/invocations/${toolCallId}/result?wait=10`)).status).toBe(200);
  });

  it("a wait of 0 answers at once, as without one; a wait past 30 s is taken as 30 s, not refused", async () => {
    const now = await postJson("/v1/invocations?wait=0", {
      tool: "external",
      args: { name: "w0" },
      toolCallId: freshId("wait-zero"),
    });
    expect(((await now.json()) as { status: string }).status).toBe("running");
    const capped = await postJson("/v1/invocations?wait=3600", {
      tool: "emit",
      args: { lines: 1 },
      toolCallId: freshId("wait-cap"),
    });
    expect(capped.status).toBe(201);
    expect(((await capped.json()) as { status: string }).status).toBe("settled");
  });

  it("a retry of the same call with a wait answers its result (200)", async () => {
    const body = { tool: "emit", args: { lines: 1 }, toolCallId: freshId("wait-again") };
    await postJson("/v1/invocations?wait=10", body);
    const again = await postJson("/v1/invocations?wait=10", body);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "settled", result: { isError: false } });
  });

  it("refuses a bad wait with 400 and starts nothing", async () => {
    for (const wait of ["-1", "soon", "1e3", ""]) {
      const toolCallId = freshId("wait-bad");
      const res = await postJson(`/v1/invocations?wait=${wait}`, {
        tool: "emit",
        args: { lines: 1 },
        toolCallId,
      });
      expect(await expectError(res, 400, "bad_request")).toContain("query.wait");
      expect((await call(`/v1/invocations/${toolCallId}`)).status).toBe(404);
    }
  });
});

describe("POST /v1/invocations/:id/cancel", () => {
  it("aborts a running tool; the result keeps the partial output and says it was cancelled", async () => {
    const created = await create({
      tool: "emit",
      args: { lines: 10_000, intervalMs: 50 },
      toolCallId: freshId("cancel"),
    });
    const res = await call(`/v1/invocations/${created.id}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    const result = await call(`/v1/invocations/${created.id}/result?wait=10`);
    expect(result.status).toBe(200);
    const settled = (await result.json()) as { isError: boolean; content: { text: string }[] };
    expect(settled.isError).toBe(true);
    expect(settled.content[0]?.text).toMatch(/cancel/i);
    expect((await view(created.id)).cancelled).toBe(true);
  });
});

describe("producer API", () => {
  it("applies write, replace, image, details, usage, addTools and terminate, then end; later calls are 409", async () => {
    const { id } = await create({
      tool: "external",
      args: { name: "agent_tool" },
      toolCallId: freshId("produce"),
    });
    const out = (body: unknown) => postJson(`/v1/invocations/${id}/output`, body);

    const first = await out({
      calls: [
        { write: "hello " },
        { write: "world" },
        {
          details: [
            ["r", { step: 1 }],
            ["s", ["files"], ["a.txt"]],
          ],
        },
        { usage: { input: 3 } },
        { usage: { input: 2, output: 1 } },
        { addTools: ["grep"] },
        { terminate: true },
      ],
    });
    expect(first.status, await first.clone().text()).toBe(200);
    let state = (await viewWhen<View>(id, (v) => v.state.terminate)).state;
    expect(state.content).toEqual([{ type: "text", text: "hello world" }]);
    expect(state.details).toEqual({ step: 1, files: ["a.txt"] });
    expect(state.usage).toEqual({ input: 5, output: 1 });
    expect(state.addedTools).toEqual(["grep"]);
    expect(state.terminate).toBe(true);

    const second = await out({
      calls: [
        { replace: "fresh" },
        { image: { data: "iVBORw0KGgo=", mimeType: "image/png" } },
        {
          details: [
            ["p", ["files"], 1, 0, ["b.txt"]],
            ["d", ["step"]],
          ],
        },
        { addTools: [] },
      ],
    });
    expect(second.status).toBe(200);
    state = (await viewWhen<View>(id, (v) => v.state.content.length === 2)).state;
    expect(state.content).toEqual([
      { type: "text", text: "fresh" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ]);
    expect(state.details).toEqual({ files: ["a.txt", "b.txt"] });

    const end = await out({
      calls: [{ write: "!" }],
      end: { isError: true, error: "agent gave up" },
    });
    expect(end.status).toBe(200);
    const result = await call(`/v1/invocations/${id}/result`);
    expect(result.status).toBe(200);
    const settled = (await result.json()) as { isError: boolean; content: { text?: string }[] };
    expect(settled.isError).toBe(true);
    expect(settled.content[0]?.text).toContain("fresh!");
    expect(settled.content[0]?.text).toContain("agent gave up");

    const before = await view(id);
    const late = await out({ calls: [{ write: "late" }] });
    await expectError(late, 409, "conflict");
    expect(await view(id)).toEqual(before);
  });
});

describe("subscriptions", () => {
  it("forwards SSE to the invocation: the first event is tool_start", async () => {
    const created = await create({
      tool: "external",
      args: { name: "s" },
      toolCallId: freshId("sse"),
    });
    const res = await fetchEvents(created.eventsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    const reader = (res.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while (!text.includes("\n\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    const data = text.split("\n").find((line) => line.startsWith("data:"));
    expect(JSON.parse(data?.slice(5) ?? "null")).toMatchObject({
      type: "tool_start",
      toolCallId: created.id,
    });
  });

  it("forwards WebSocket upgrades; a plain GET is 426", async () => {
    const created = await create({
      tool: "external",
      args: { name: "w" },
      toolCallId: freshId("ws"),
    });
    const path = new URL(created.socketUrl).pathname + new URL(created.socketUrl).search;
    await expectError(await call(path, {}, false), 426, "upgrade_required");

    const res = await call(path, { headers: { Upgrade: "websocket" } }, false);
    expect(res.status).toBe(101);
    const socket = res.webSocket as WebSocket;
    const first = new Promise<string>((resolve) => {
      socket.addEventListener("message", (e) => resolve(e.data as string), { once: true });
    });
    socket.accept();
    expect(JSON.parse(await first)).toMatchObject({ type: "tool_start", toolCallId: created.id });
    socket.close();
  });
});

function fetchEvents(eventsUrl: string): Promise<Response> {
  const url = new URL(eventsUrl);
  return call(url.pathname + url.search, {}, false);
}
