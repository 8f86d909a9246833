// The client library resumes against the real Worker and Durable Object: a dropped
// connection comes back after the last update it folded and gets no new base.
import { describe, expect, inject, it } from "vitest";
import { type SocketLike, subscribe, ToolwireClient } from "../../src/client/index.ts";
import type { HarnessEvent } from "../../src/core/events/types.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });

/** Output before the drop, large enough that a few one-line deltas cost less than a base of it. */
const PAD = `${"=".repeat(2000)}\n`;

const isBase = (e: HarnessEvent) => e.type === "tool_update" && e.ops[0]?.[0] === "r";

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("client resume against the real Worker", () => {
  it("socket: after a drop it reconnects with ?after= and folds the missed deltas, no base", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "resume" } });
    const out = api.producer(created.id);
    const urls: string[] = [];
    const sockets: SocketLike[] = [];
    const sub = subscribe(created.socketUrl, {
      backoff: { initialMs: 10, maxMs: 20 },
      createSocket: (url) => {
        urls.push(url);
        const socket = new WebSocket(url) as unknown as SocketLike;
        sockets.push(socket);
        return socket;
      },
    });
    const text = () => {
      const block = sub.state?.content[0];
      return block?.type === "text" ? block.text : "";
    };
    await out.send([{ write: `${PAD}one\n` }]);
    await until("one", () => text() === `${PAD}one\n`);
    const basesBefore = sub.events.filter(isBase).length;
    sockets[0]?.close(4000, "test drops the connection");
    await out.send([{ write: "two\n" }]);
    await out.send([{ write: "three\n" }]);
    await until("the missed lines", () => text() === `${PAD}one\ntwo\nthree\n`);
    expect(urls).toHaveLength(2);
    expect(new URL(urls[1] ?? "").searchParams.get("after")).toMatch(/^\d+$/);
    expect(sub.events.filter(isBase).length).toBe(basesBefore);
    await out.send([], { isError: false });
    const outcome = await sub.finished;
    expect(outcome.status).toBe("settled");
  });

  it("SSE: after a cut stream it reconnects with Last-Event-ID and gets no base", async () => {
    const created = await api.createInvocation({ tool: "external", args: { name: "resume" } });
    const out = api.producer(created.id);
    const lastEventIds: (string | null)[] = [];
    const cuts: (() => void)[] = [];
    const sub = subscribe(created.eventsUrl, {
      transport: "sse",
      backoff: { initialMs: 10, maxMs: 20 },
      fetch: async (input, init) => {
        lastEventIds.push(new Headers(init?.headers).get("last-event-id"));
        const abort = new AbortController();
        init?.signal?.addEventListener("abort", () => abort.abort());
        cuts.push(() => abort.abort());
        return fetch(input, { ...init, signal: abort.signal });
      },
    });
    const text = () => {
      const block = sub.state?.content[0];
      return block?.type === "text" ? block.text : "";
    };
    await out.send([{ write: `${PAD}one\n` }]);
    await until("one", () => text() === `${PAD}one\n`);
    const basesBefore = sub.events.filter(isBase).length;
    cuts[0]?.();
    await out.send([{ write: "two\n" }]);
    await until("two", () => text() === `${PAD}one\ntwo\n`);
    expect(lastEventIds[0]).toBeNull();
    expect(lastEventIds.at(-1)).toMatch(/^\d+$/);
    expect(sub.events.filter(isBase).length).toBe(basesBefore);
    sub.close();
    await out.send([], { isError: false });
  });
});
