import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  PING_MESSAGE,
  SSE_KEEPALIVE_COMMENT,
} from "../../../durable-objects/invocation/fanout/keep-alive.ts";
import { Subscribers } from "../../../durable-objects/invocation/fanout/subscribers.ts";
import { encoder } from "../../../src/core/chord/index.ts";
import type { ToolStartEvent } from "../../../src/core/events/types.ts";
import { ToolOutputSink } from "../../../src/core/output/index.ts";
import { workerConfig } from "../../../src/protocol/index.ts";
import { connectSocket, startRequest, stubFor, textOf, value, view, waitFor } from "./helpers.ts";

const start: ToolStartEvent = {
  type: "tool_start",
  runId: "run-1",
  turnId: "turn-1",
  toolCallId: "keep-alive-sse",
  toolName: "external",
  args: {},
};

/** Reads an SSE body chunk by chunk into one growing text. */
function readAll(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const seen = { text: "", done: false };
  const finished = (async () => {
    for (;;) {
      const { value: chunk, done } = await reader.read();
      if (done) {
        seen.done = true;
        return;
      }
      seen.text += chunk;
    }
  })();
  return { seen, finished, cancel: () => reader.cancel() };
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe("SSE keep-alive (decision 071)", () => {
  it("is 25 s in the test Worker's own env (SSE_KEEPALIVE_SECONDS unset)", () => {
    expect(workerConfig(env).sseKeepAliveMs).toBe(25_000);
  });

  it("writes ': keep-alive' after each silence on an open stream, between whole events, until the invocation settles", async () => {
    const stub = stubFor("keep-alive-sse");
    value(await stub.start(startRequest("keep-alive-sse", "external", { name: "t" })));
    const state = (await view("keep-alive-sse")).state;
    const subs = await runInDurableObject(
      stub,
      (_instance, ctx) => new Subscribers(ctx, encoder, { sseKeepAliveMs: 50 }),
    );
    const body = subs.openEventStream(start, state, 1, null).body;
    if (!body) throw new Error("no body");
    const { seen, finished } = readAll(body);

    await waitFor("a keep-alive", () =>
      count(seen.text, SSE_KEEPALIVE_COMMENT) >= 1 ? true : undefined,
    );
    await waitFor("another one", () =>
      count(seen.text, SSE_KEEPALIVE_COMMENT) >= 2 ? true : undefined,
    );
    // Events and comments interleave as whole blocks; a comment is never inside an event.
    for (const block of seen.text.split("\n\n").filter(Boolean)) {
      expect(block === ": keep-alive" || block.startsWith("id: ")).toBe(true);
    }

    const sink = new ToolOutputSink({});
    sink.seed(state);
    sink.flush();
    sink.write("news\n");
    subs.publish(start, sink.flush(), sink.snapshot(), 2);
    subs.end(start, false, 2);
    await finished;
    expect(seen.text.endsWith(`"type":"tool_end","isError":false}\n\n`)).toBe(true);
    expect(subs.sseStats().streams).toBe(0);
  });

  it("a reader that cancels leaves no stream (nor its timer) behind", async () => {
    const stub = stubFor("keep-alive-cancel");
    value(await stub.start(startRequest("keep-alive-cancel", "external", { name: "t" })));
    const state = (await view("keep-alive-cancel")).state;
    const subs = await runInDurableObject(
      stub,
      (_instance, ctx) => new Subscribers(ctx, encoder, { sseKeepAliveMs: 50 }),
    );
    const body = subs.openEventStream(start, state, 1, null).body;
    if (!body) throw new Error("no body");
    const { seen, cancel } = readAll(body);
    await waitFor("a keep-alive", () =>
      count(seen.text, SSE_KEEPALIVE_COMMENT) >= 1 ? true : undefined,
    );
    await cancel();
    expect(subs.sseStats().streams).toBe(0);
  });
});

describe("WebSocket ping (decision 071)", () => {
  it('answers {"type":"ping"} with {"type":"pong"} from the runtime, also after eviction', async () => {
    const name = "keep-alive-ws";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "t" })));
    const sub = await connectSocket(name);
    const pongs = () => sub.events.filter((e) => (e.type as string) === "pong").length;

    sub.socket.send(PING_MESSAGE);
    await waitFor("pong", () => (pongs() === 1 ? true : undefined));
    const answered = await runInDurableObject(stub, (_instance, ctx) => {
      const [ws] = ctx.getWebSockets();
      return ws ? ctx.getWebSocketAutoResponseTimestamp(ws) : null;
    });
    expect(answered).toBeInstanceOf(Date);

    await evictDurableObject(stub);
    sub.socket.send(PING_MESSAGE);
    await waitFor("pong after eviction", () => (pongs() === 2 ? true : undefined));

    // The socket survived the eviction: the next publication reaches it (as a fresh base).
    value(await stub.produce([{ write: "after\n" }]));
    await stub.flushOutput();
    await waitFor("update", () => (textOf(sub.state) === "after\n" ? true : undefined));
    expect(sub.bases).toBe(2);
  });
});
