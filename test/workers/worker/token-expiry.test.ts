// A subscription outlives no subscribe token: sockets and event streams opened with a
// token stop at the first event after it expires (docs/decisions/112).
import { describe, expect, it } from "vitest";
import { TOKEN_EXPIRED_CLOSE } from "../../../src/core/events/index.ts";
import type { HarnessEvent } from "../../../src/core/events/types.ts";
import { expired } from "../../../src/protocol/index.ts";
import { mintSubscribeToken } from "../../../src/worker/index.ts";
import { API_TOKEN, call, create, expectError, postJson, SUBSCRIBE_SECRET } from "./helpers.ts";

interface OpenSocket {
  events: HarnessEvent[];
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
}

async function openSocket(path: string, headers: Record<string, string> = {}): Promise<OpenSocket> {
  const res = await call(path, { headers: { Upgrade: "websocket", ...headers } }, false);
  expect(res.status).toBe(101);
  const socket = res.webSocket as WebSocket;
  const events: HarnessEvent[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason }));
  });
  socket.addEventListener("message", (e) => events.push(JSON.parse(e.data as string)));
  socket.accept();
  return { events, closed, socket };
}

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const updates = (s: OpenSocket) => s.events.filter((e) => e.type === "tool_update").length;

describe("expired(): from the expiry instant on", () => {
  it("is false just under it, true at it and just over it, never without an expiry", () => {
    expect(expired(10_000, 9_999)).toBe(false);
    expect(expired(10_000, 10_000)).toBe(true);
    expect(expired(10_000, 10_001)).toBe(true);
    expect(expired(null, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe("subscriptions and token expiry", { timeout: 20_000 }, () => {
  it("closes a token socket with 4401 at the first event after expiry, ends its SSE stream, keeps bearer sockets", async () => {
    const created = await create({ tool: "external", args: { name: "expiry" } });
    const id = created.id;
    const out = `/v1/invocations/${id}/output`;
    // Valid for 2-3 s from now (expiry is a whole second, at least two seconds ahead).
    const token = await mintSubscribeToken(SUBSCRIBE_SECRET, id, Date.now(), 3);
    const expiresAtMs = Number(token.split(".")[1]) * 1000;
    const viaToken = await openSocket(`/v1/invocations/${id}/socket?token=${token}`);
    const viaBearer = await openSocket(`/v1/invocations/${id}/socket`, {
      Authorization: `Bearer ${API_TOKEN}`,
      // A client cannot shorten (or lengthen) anyone's reading by sending the header itself.
      "x-toolwire-token-expires": "1",
    });
    const sse = await call(`/v1/invocations/${id}/events?token=${token}`, {}, false);
    const sseText = new Response(sse.body).text();
    await until("greetings", () => updates(viaToken) === 1 && updates(viaBearer) === 1);

    // Just under the expiry: events still flow to everyone.
    expect(Date.now()).toBeLessThan(expiresAtMs);
    expect((await postJson(out, { calls: [{ write: "before\n" }], seq: 0 })).status).toBe(200);
    await until("the first delta", () => updates(viaToken) === 2 && updates(viaBearer) === 2);

    await until("the token to expire", () => Date.now() >= expiresAtMs + 5, 5000);
    expect((await postJson(out, { calls: [{ write: "after\n" }], seq: 1 })).status).toBe(200);
    expect(await viaToken.closed).toEqual({
      code: TOKEN_EXPIRED_CLOSE.code,
      reason: TOKEN_EXPIRED_CLOSE.reason,
    });
    expect(updates(viaToken)).toBe(2);
    const text = await sseText;
    expect(text).not.toContain("after\\n");
    expect(text.trimEnd().endsWith(": subscribe token expired")).toBe(true);
    await until("the bearer socket's delta", () => updates(viaBearer) === 3);

    // Reconnecting with the same token is refused; the bearer socket still gets the end.
    const again = await call(
      `/v1/invocations/${id}/socket?token=${token}`,
      {
        headers: { Upgrade: "websocket" },
      },
      false,
    );
    expect(await expectError(again, 401, "unauthorized")).toContain("expired");
    expect((await postJson(out, { calls: [], end: { isError: false }, seq: 2 })).status).toBe(200);
    expect(await viaBearer.closed).toEqual({ code: 1000, reason: "settled" });
    expect(viaBearer.events.at(-1)?.type).toBe("tool_end");
  });

  it("sends no tool_end to a socket whose token expired before the invocation ended", async () => {
    const created = await create({ tool: "external", args: { name: "expiry-end" } });
    const token = await mintSubscribeToken(SUBSCRIBE_SECRET, created.id, Date.now(), 2);
    const expiresAtMs = Number(token.split(".")[1]) * 1000;
    const viaToken = await openSocket(`/v1/invocations/${created.id}/socket?token=${token}`);
    await until("greeting", () => updates(viaToken) === 1);
    await until("the token to expire", () => Date.now() >= expiresAtMs + 5, 4000);
    const res = await postJson(`/v1/invocations/${created.id}/output`, {
      calls: [],
      end: { isError: false },
    });
    expect(res.status).toBe(200);
    expect((await viaToken.closed).code).toBe(TOKEN_EXPIRED_CLOSE.code);
    expect(viaToken.events.map((e) => e.type)).toEqual(["tool_start", "tool_update"]);
  });
});
