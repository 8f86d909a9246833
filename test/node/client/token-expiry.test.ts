// The client acts on the server's "subscribe token expired" close (docs/decisions/112).
import { describe, expect, it } from "vitest";
import { type SocketLike, subscribe } from "../../../src/client/index.ts";
import { TOKEN_EXPIRED_CLOSE } from "../../../src/core/events/index.ts";
import { emptyState, settle } from "./fake-producer.ts";

const ids = { runId: "r", turnId: "t", toolCallId: "c" };

/** A socket that opens at once and lets the test speak and close for the server. */
class ServerSocket implements SocketLike {
  readyState = 0;
  private listeners = new Map<string, ((event?: unknown) => void)[]>();
  constructor() {
    queueMicrotask(() => {
      this.readyState = 1;
      this.emit("open");
      this.frame({ type: "tool_start", ...ids, toolName: "x", args: {} });
      const state = emptyState();
      state.content[0] = { type: "text", text: "before\n" };
      this.frame({ type: "tool_update", ...ids, ops: [["r", state]], seq: 3 });
    });
  }
  addEventListener(type: string, listener: (event: { data: unknown }) => void): void {
    this.listeners.set(type, [
      ...(this.listeners.get(type) ?? []),
      listener as (event?: unknown) => void,
    ]);
  }
  send(): void {}
  close(): void {
    this.readyState = 3;
  }
  frame(event: unknown): void {
    this.emit("message", { data: JSON.stringify(event) });
  }
  serverClose(code: number, reason: string): void {
    this.readyState = 3;
    this.emit("close", { code, reason });
  }
  private emit(type: string, event?: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
}

describe("socket closed because the subscribe token expired", () => {
  it("fails the subscription at once with an unauthorized 'expired' error, keeping the state, no reconnect", async () => {
    const sockets: ServerSocket[] = [];
    const sub = subscribe("ws://x/v1/invocations/c/socket?token=t", {
      createSocket: () => {
        const socket = new ServerSocket();
        sockets.push(socket);
        return socket;
      },
      backoff: { initialMs: 1, maxMs: 1 },
    });
    await settle();
    expect(sub.status).toBe("live");
    sockets[0]?.serverClose(TOKEN_EXPIRED_CLOSE.code, TOKEN_EXPIRED_CLOSE.reason);
    const outcome = await sub.finished;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("unauthorized");
    expect(outcome.error?.status).toBe(401);
    expect(outcome.error?.message).toMatch(/expired/);
    expect(outcome.state?.content[0]).toEqual({ type: "text", text: "before\n" });
    await settle(10);
    expect(sockets).toHaveLength(1);
  });

  it("reconnects (resuming) after any other close code", async () => {
    const sockets: ServerSocket[] = [];
    const urls: string[] = [];
    const sub = subscribe("ws://x/v1/invocations/c/socket?token=t", {
      createSocket: (url) => {
        urls.push(url);
        const socket = new ServerSocket();
        sockets.push(socket);
        return socket;
      },
      backoff: { initialMs: 1, maxMs: 1 },
    });
    await settle();
    for (const code of [TOKEN_EXPIRED_CLOSE.code - 1, TOKEN_EXPIRED_CLOSE.code + 1]) {
      sockets.at(-1)?.serverClose(code, "other");
      await settle(20);
    }
    expect(sockets).toHaveLength(3);
    expect(urls[1]).toContain("after=3");
    expect(sub.status).toBe("live");
    sub.close();
  });
});
