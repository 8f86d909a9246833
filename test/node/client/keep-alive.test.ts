// Keep-alive on both transports, with a fake socket, a fake fetch and a fake clock.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_KEEP_ALIVE,
  type SocketLike,
  socketTransport,
  sseTransport,
  subscribe,
} from "../../../src/client/index.ts";
import { emptyState } from "./fake-producer.ts";

const ids = { runId: "r", turnId: "t", toolCallId: "c" };
const PING = '{"type":"ping"}';
const PONG = '{"type":"pong"}';

/** A WebSocket that opens at once, records what it is sent, and lets the test speak for the server. */
class FakeSocket implements SocketLike {
  readyState = 0;
  sent: string[] = [];
  closed = false;
  private listeners = new Map<string, ((event: { data: unknown }) => void)[]>();

  constructor() {
    queueMicrotask(() => {
      this.readyState = 1;
      this.emit("open");
    });
  }
  addEventListener(type: string, listener: (event: { data: unknown }) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.closed = true;
    this.readyState = 3;
  }
  emit(type: string, data?: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener({ data });
  }
  /** The server sends one frame. */
  frame(event: unknown): void {
    this.emit("message", typeof event === "string" ? event : JSON.stringify(event));
  }
  /** The server sends a start event and a base. */
  hello(text: string): void {
    const state = emptyState();
    state.content[0] = { type: "text", text };
    this.frame({ type: "tool_start", ...ids, toolName: "bash", args: {} });
    this.frame({ type: "tool_update", ...ids, ops: [["r", state]] });
  }
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("WebSocket keep-alive", () => {
  it("uses the wire contract's numbers", () => {
    expect(DEFAULT_KEEP_ALIVE).toEqual({
      pingEveryMs: 20_000,
      pongWithinMs: 45_000,
      sseQuietMs: 60_000,
    });
  });

  it("pings every 20 s, passes no pong on as a frame, and stays open while answers come", async () => {
    const socket = new FakeSocket();
    const messages: string[] = [];
    const closed = vi.fn();
    const connect = socketTransport("ws://x/v1/invocations/c/socket", {
      createSocket: () => socket,
    });
    connect({ message: (t) => messages.push(t), closed });
    await vi.advanceTimersByTimeAsync(19_999);
    expect(socket.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(socket.sent).toEqual([PING]);
    for (let i = 0; i < 10; i++) {
      socket.frame(PONG);
      await vi.advanceTimersByTimeAsync(20_000);
    }
    expect(socket.sent).toHaveLength(11);
    expect(messages).toEqual([]);
    expect(closed).not.toHaveBeenCalled();
    expect(socket.closed).toBe(false);
  });

  it("declares the connection dead 45 s after a ping with no frame at all, not a moment earlier", async () => {
    const socket = new FakeSocket();
    const closed = vi.fn();
    const connect = socketTransport("ws://x/v1/invocations/c/socket", {
      createSocket: () => socket,
    });
    connect({ message: () => {}, closed });
    await vi.advanceTimersByTimeAsync(20_000 + 44_999);
    expect(closed).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toHaveBeenCalledTimes(1);
    const error = closed.mock.calls[0]?.[0];
    expect(error?.permanent).toBe(false);
    expect(error?.message).toContain("45 s");
    expect(socket.closed).toBe(true);
  });

  it("counts any frame, not only a pong, as an answer", async () => {
    const socket = new FakeSocket();
    const closed = vi.fn();
    const connect = socketTransport("ws://x/v1/invocations/c/socket", {
      createSocket: () => socket,
    });
    connect({ message: () => {}, closed });
    await vi.advanceTimersByTimeAsync(20_000 + 40_000);
    socket.frame({ type: "tool_update", ...ids, ops: [] });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(closed).not.toHaveBeenCalled();
  });

  it("makes a subscription reconnect and converge from a new base; pongs are not events", async () => {
    const sockets: FakeSocket[] = [];
    const sub = subscribe("ws://x/v1/invocations/c/socket", {
      createSocket: () => {
        const socket = new FakeSocket();
        sockets.push(socket);
        return socket;
      },
      keepAlive: { pingEveryMs: 1000, pongWithinMs: 3000 },
      backoff: { initialMs: 10, maxMs: 10, maxAttempts: 3 },
    });
    await vi.advanceTimersByTimeAsync(0);
    sockets[0]?.hello("one\n");
    expect(sub.status).toBe("live");
    await vi.advanceTimersByTimeAsync(1000);
    sockets[0]?.frame(PONG);
    expect(sub.events.map((e) => e.type)).toEqual(["tool_start", "tool_update"]);
    // The server goes silent.
    await vi.advanceTimersByTimeAsync(1000 + 3000);
    expect(sub.status).toBe("reconnecting");
    expect(sockets[0]?.closed).toBe(true);
    await vi.advanceTimersByTimeAsync(10);
    expect(sockets).toHaveLength(2);
    sockets[1]?.hello("one\ntwo\n");
    expect(sub.status).toBe("live");
    const first = sub.state?.content[0];
    expect(first?.type === "text" ? first.text : null).toBe("one\ntwo\n");
    sub.close();
  });
});

describe("SSE keep-alive", () => {
  /** A fetch whose single response body the test writes to. */
  function fakeFetch() {
    const bodies: ReadableStreamDefaultController<Uint8Array>[] = [];
    const fetch = vi.fn(async (_url: string | URL | Request, init?: RequestInit) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          bodies.push(controller);
          init?.signal?.addEventListener("abort", () => controller.error(new Error("aborted")));
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const write = (i: number, text: string) => bodies[i]?.enqueue(new TextEncoder().encode(text));
    return { fetch: fetch as unknown as typeof globalThis.fetch, calls: fetch.mock.calls, write };
  }

  it("ignores comment lines, which keep it alive; 60 s without a byte is dead", async () => {
    const { fetch, write } = fakeFetch();
    const messages: string[] = [];
    const closed = vi.fn();
    sseTransport("http://x/v1/invocations/c/events", { fetch })({
      message: (t) => messages.push(t),
      closed,
    });
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 5; i++) {
      write(0, ": keep-alive\n\n");
      await vi.advanceTimersByTimeAsync(25_000);
    }
    expect(messages).toEqual([]);
    expect(closed).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(60_000 - 25_000 - 1);
    expect(closed).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toHaveBeenCalledTimes(1);
    expect(closed.mock.calls[0]?.[0]?.permanent).toBe(false);
    expect(closed.mock.calls[0]?.[0]?.message).toContain("60 s");
  });

  it("leaves no timer behind once settled, even when the body never ends", async () => {
    // A stream the server keeps open after tool_end, read by a fetch that ignores the abort.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const frame = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`;
        const text =
          frame({ type: "tool_update", ...ids, ops: [["r", emptyState()]] }) +
          frame({ type: "tool_end", ...ids, isError: false });
        controller.enqueue(new TextEncoder().encode(text));
      },
    });
    const fetch = async () =>
      new Response(body, { headers: { "content-type": "text/event-stream" } });
    const sub = subscribe("http://x/v1/invocations/c/events", { transport: "sse", fetch });
    await vi.advanceTimersByTimeAsync(0);
    expect(sub.status).toBe("settled");
    // A pending quiet-stream deadline would keep a Node process alive for a minute.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("makes a subscription reconnect after a silent minute", async () => {
    const { fetch, calls, write } = fakeFetch();
    const sub = subscribe("http://x/v1/invocations/c/events", {
      transport: "sse",
      fetch,
      backoff: { initialMs: 10, maxMs: 10, maxAttempts: 3 },
    });
    await vi.advanceTimersByTimeAsync(0);
    const state = emptyState();
    write(0, `data: ${JSON.stringify({ type: "tool_update", ...ids, ops: [["r", state]] })}\n\n`);
    await vi.advanceTimersByTimeAsync(0);
    expect(sub.status).toBe("live");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sub.status).toBe("reconnecting");
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(2);
    sub.close();
  });
});
