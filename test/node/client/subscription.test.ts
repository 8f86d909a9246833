import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Subscription, subscribe, ToolwireError } from "../../../src/client/index.ts";
import { transportFor } from "../../../src/client/subscription.ts";
import { FakeProducer, permanentError, settle } from "./fake-producer.ts";

const fast = { initialMs: 1, maxMs: 4, maxAttempts: 5 };

function text(sub: Subscription): string | undefined {
  const first = sub.state?.content[0];
  return first?.type === "text" ? first.text : undefined;
}

describe("subscribe", () => {
  it("folds a stream into the producer's state and settles on tool_end", async () => {
    const producer = new FakeProducer();
    const sub = subscribe("ws://unused/v1/invocations/call/socket", {
      connect: producer.transport,
    });
    const statuses: string[] = [];
    sub.onChange((s) => statuses.push(s.status));
    expect(sub.status).toBe("connecting");
    await settle();
    expect(sub.status).toBe("live");
    expect(sub.start?.toolName).toBe("bash");

    producer.state.content[0] = { type: "text", text: "hello\n" };
    producer.publish();
    (producer.state.content[0] as { text: string }).text += "world\n";
    producer.state.truncation.totalBytes = 12;
    producer.publish();
    expect(text(sub)).toBe("hello\nworld\n");

    producer.end(true);
    const outcome = await sub.finished;
    expect(outcome.status).toBe("settled");
    expect(outcome.end?.isError).toBe(true);
    expect(outcome.state).toEqual(producer.state);
    expect(statuses.at(-1)).toBe("settled");
    expect(sub.events.map((e) => e.type)).toEqual([
      "tool_start",
      "tool_update",
      "tool_update",
      "tool_update",
      "tool_end",
    ]);
    expect(producer.live()).toHaveLength(0);
  });

  it("reconnects after the server drops the connection and converges from the new base", async () => {
    const producer = new FakeProducer();
    const sub = subscribe("ws://unused/x", { connect: producer.transport, backoff: fast });
    await settle();
    producer.state.content[0] = { type: "text", text: "before\n" };
    producer.publish();

    producer.dropAll();
    expect(sub.status).toBe("reconnecting");
    expect(text(sub)).toBe("before\n");
    // Written while the client is away: only the next base can carry it.
    (producer.state.content[0] as { text: string }).text += "during\n";
    producer.publish();
    await settle(20);

    expect(sub.status).toBe("live");
    expect(producer.connections).toHaveLength(2);
    (producer.state.content[0] as { text: string }).text += "after\n";
    producer.publish();
    expect(text(sub)).toBe("before\nduring\nafter\n");
    expect(sub.attempt).toBe(0);
    sub.close();
    expect((await sub.finished).status).toBe("closed");
  });

  it("asks for a fresh base after a frame it cannot decode, skipping deltas until it comes", async () => {
    const producer = new FakeProducer();
    const sub = subscribe("ws://unused/x", { connect: producer.transport, backoff: fast });
    await settle();
    // An interned path id this stream never defined.
    producer.sendRaw(JSON.stringify({ type: "tool_update", ops: [["a", 7, "x"]] }));
    expect(sub.status).toBe("reconnecting");
    expect(producer.resyncs).toBe(1);
    producer.state.content[0] = { type: "text", text: "fresh\n" };
    producer.publish();
    await settle();
    expect(sub.status).toBe("live");
    expect(sub.state).toEqual(producer.state);
    expect(producer.connections).toHaveLength(1);
    sub.close();
  });

  it("opens a new connection when a resync brings no base in time", async () => {
    const producer = new FakeProducer();
    producer.ignoreResyncs = true;
    const sub = subscribe("ws://unused/x", {
      connect: producer.transport,
      backoff: fast,
      resyncTimeoutMs: 20,
    });
    await settle();
    producer.sendRaw(JSON.stringify({ type: "tool_update", ops: [["a", 7, "x"]] }));
    expect(producer.resyncs).toBe(1);
    // Deltas published meanwhile are skipped: the client waits for a base.
    producer.state.content[0] = { type: "text", text: "meanwhile\n" };
    producer.publish();
    expect(sub.status).toBe("reconnecting");
    await settle(60);
    expect(producer.connections).toHaveLength(2);
    expect(sub.status).toBe("live");
    expect(sub.state).toEqual(producer.state);
    sub.close();
  });

  it("asks again after a delta when its resync was not answered, on the same connection", async () => {
    const producer = new FakeProducer();
    producer.unansweredResyncs = 1;
    const sub = subscribe("ws://unused/x", { connect: producer.transport, backoff: fast });
    await settle();
    producer.sendRaw(JSON.stringify({ type: "tool_update", ops: [["a", 7, "x"]] }));
    expect(producer.resyncs).toBe(1);
    producer.state.content[0] = { type: "text", text: "next\n" };
    producer.publish();
    expect(producer.resyncs).toBe(2);
    await settle();
    expect(sub.status).toBe("live");
    expect(sub.state).toEqual(producer.state);
    expect(producer.connections).toHaveLength(1);
    sub.close();
  });

  it("keeps the connection when the resync is answered before the deadline", async () => {
    const producer = new FakeProducer();
    const sub = subscribe("ws://unused/x", {
      connect: producer.transport,
      backoff: fast,
      resyncTimeoutMs: 20,
    });
    await settle();
    producer.sendRaw(JSON.stringify({ type: "tool_update", ops: [["a", 7, "x"]] }));
    await settle(60);
    expect(producer.connections).toHaveLength(1);
    expect(sub.status).toBe("live");
    sub.close();
  });

  it("treats a stream that does not start with a base as a gap", async () => {
    const producer = new FakeProducer();
    const sub = subscribe("ws://unused/x", { connect: producer.transport, backoff: fast });
    await settle();
    producer.sendRaw("not json");
    expect(producer.resyncs).toBe(1);
    await settle();
    expect(sub.status).toBe("live");
    sub.close();
  });

  it("reconnects instead when the transport cannot resync (SSE)", async () => {
    const producer = new FakeProducer();
    producer.canResync = false;
    const sub = subscribe("http://unused/x", { connect: producer.transport, backoff: fast });
    await settle();
    producer.sendRaw(JSON.stringify({ type: "tool_update", ops: [["t", 3, 1]] }));
    await settle(20);
    expect(producer.connections).toHaveLength(2);
    expect(sub.status).toBe("live");
    expect(sub.state).toEqual(producer.state);
    sub.close();
  });

  it("fetches the final state when tool_end arrives before the fold caught up", async () => {
    const producer = new FakeProducer();
    producer.canResync = false;
    const sub = subscribe("http://unused/x", { connect: producer.transport, backoff: fast });
    await settle();
    producer.state.content[0] = { type: "text", text: "final\n" };
    producer.ended = false;
    // A corrupt delta, then the end: the end alone must not settle a stale state.
    producer.sendRaw(JSON.stringify({ type: "tool_update", ops: [["a", 9, "?"]] }));
    const outcome = await sub.finished;
    expect(outcome.status).toBe("settled");
    expect(outcome.state).toEqual(producer.state);
  });

  it("stops at once on a permanent error such as a bad token", async () => {
    const producer = new FakeProducer();
    producer.refuse = permanentError;
    const sub = subscribe("ws://unused/x", { connect: producer.transport, backoff: fast });
    const outcome = await sub.finished;
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toBe(permanentError);
  });

  it("follows over SSE where the platform has no WebSocket (Node 20), unless given a socket factory", async () => {
    const platform = Object.getOwnPropertyDescriptor(globalThis, "WebSocket");
    Reflect.deleteProperty(globalThis, "WebSocket");
    try {
      const asked: string[] = [];
      const notFound: typeof fetch = async (input) => {
        asked.push(String(input));
        return Response.json(
          { error: { code: "not_found", message: "No invocation." } },
          { status: 404 },
        );
      };
      const sub = subscribe("ws://h/v1/invocations/c/socket?token=t", {
        transport: "socket",
        fetch: notFound,
      });
      expect((await sub.finished).error?.code).toBe("not_found");
      expect(asked).toEqual(["http://h/v1/invocations/c/events?token=t"]);
      expect(transportFor({})).toBe("sse");
      expect(transportFor({ createSocket: () => ({}) as never })).toBe("socket");
      Object.defineProperty(globalThis, "WebSocket", { value: class {}, configurable: true });
      expect(transportFor({})).toBe("socket");
      expect(transportFor({ transport: "sse" })).toBe("sse");
    } finally {
      Reflect.deleteProperty(globalThis, "WebSocket");
      if (platform) Object.defineProperty(globalThis, "WebSocket", platform);
    }
  });

  it("gives up after the configured number of attempts", async () => {
    const producer = new FakeProducer();
    producer.refuse = new ToolwireError("unreachable", "connection refused", 0);
    const sub = subscribe("ws://unused/x", { connect: producer.transport, backoff: fast });
    const outcome = await sub.finished;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("gave_up");
    expect(outcome.error?.message).toContain("after 5 attempts");
    expect(outcome.error?.message).toContain("connection refused");
  });

  it("keeps only the newest raw events", async () => {
    const producer = new FakeProducer();
    const sub = subscribe("ws://unused/x", { connect: producer.transport, keepEvents: 3 });
    await settle();
    for (let i = 0; i < 5; i++) {
      producer.state.details = { i };
      producer.publish();
    }
    expect(sub.events).toHaveLength(3);
    expect(sub.state?.details).toEqual({ i: 4 });
    sub.close();
  });

  it("converges to the producer over random writes, drops and corrupt frames (property)", async () => {
    type Step =
      | { kind: "write"; text: string }
      | { kind: "slide"; n: number }
      | { kind: "details"; key: string; value: number }
      | { kind: "usage"; n: number }
      | { kind: "drop" }
      | { kind: "corrupt" }
      | { kind: "wait" };
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        arbitrary: fc.record({ kind: fc.constant("write" as const), text: fc.string() }),
        weight: 5,
      },
      { arbitrary: fc.record({ kind: fc.constant("slide" as const), n: fc.nat(20) }), weight: 2 },
      {
        arbitrary: fc.record({
          kind: fc.constant("details" as const),
          key: fc.constantFrom("a", "b", "c"),
          value: fc.integer(),
        }),
        weight: 2,
      },
      { arbitrary: fc.record({ kind: fc.constant("usage" as const), n: fc.nat(100) }), weight: 1 },
      { arbitrary: fc.constant({ kind: "drop" as const }), weight: 1 },
      { arbitrary: fc.constant({ kind: "corrupt" as const }), weight: 1 },
      { arbitrary: fc.constant({ kind: "wait" as const }), weight: 2 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), fc.boolean(), async (steps, resync) => {
        const producer = new FakeProducer();
        producer.canResync = resync;
        const sub = subscribe("ws://unused/x", {
          connect: producer.transport,
          backoff: { initialMs: 1, maxMs: 2, maxAttempts: 1000 },
        });
        await settle(1);
        for (const s of steps) {
          const block = producer.state.content[0] as { text: string };
          if (s.kind === "write") block.text += s.text;
          else if (s.kind === "slide") block.text = block.text.slice(s.n);
          else if (s.kind === "details")
            (producer.state.details as Record<string, number>)[s.key] = s.value;
          else if (s.kind === "usage") producer.state.usage = { input: s.n };
          else if (s.kind === "drop") producer.dropAll();
          else if (s.kind === "corrupt")
            producer.sendRaw('{"type":"tool_update","ops":[["s",99,1]]}');
          else await settle(1);
          producer.publish();
        }
        producer.end();
        const outcome = await sub.finished;
        expect(outcome.status).toBe("settled");
        expect(outcome.state).toEqual(producer.state);
      }),
      { seed: 5, numRuns: 150 },
    );
  });
});
