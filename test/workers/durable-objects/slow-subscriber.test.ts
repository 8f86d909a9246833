import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import {
  MAX_SSE_QUEUED_BYTES,
  SseStream,
} from "../../../durable-objects/invocation/fanout/sse-stream.ts";
import { InvocationReplica } from "../../../src/client/index.ts";
import { apply, encoder } from "../../../src/core/chord/index.ts";
import type { JsonValue, Op } from "../../../src/core/chord/types.ts";
import type { HarnessEvent, ToolStartEvent } from "../../../src/core/events/types.ts";
import { DEFAULT_OUTPUT_POLICY, ToolOutputSink } from "../../../src/core/output/index.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import { startRequest, stubFor, textOf, value, view, waitFor } from "./helpers.ts";

type StatsStub = ReturnType<typeof stubFor> & {
  sseStats(): Promise<{ maxQueuedBytes: number; resets: number; streams: number }>;
};

/** A client of one SSE body, folding with the client library (parser + replica). */
function sseClient(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const replica = new InvocationReplica();
  const events: HarnessEvent[] = [];
  let bases = 0;
  const parser = createParser({
    onEvent(message) {
      const event = JSON.parse(message.data) as HarnessEvent;
      events.push(event);
      if (event.type !== "tool_update") return;
      if (event.ops[0]?.[0] === "r") bases++;
      const outcome = replica.receive(event.ops);
      if (outcome.kind !== "applied") throw new Error(`fold failed: ${JSON.stringify(outcome)}`);
    },
  });
  let done = false;
  let bytesRead = 0;
  return {
    get bytesRead() {
      return bytesRead;
    },
    replica,
    events,
    get bases() {
      return bases;
    },
    get done() {
      return done;
    },
    /** Reads one chunk and folds the events it completes. */
    async readOnce(): Promise<void> {
      const chunk = await reader.read();
      if (chunk.done) {
        done = true;
        return;
      }
      bytesRead += chunk.value.length;
      parser.feed(chunk.value);
    },
    /** Reads until the folded state equals `expected`. */
    async readUntil(expected: ToolOutputState): Promise<void> {
      const target = JSON.stringify(expected);
      while (JSON.stringify(replica.state) !== target) {
        if (done) throw new Error("stream ended before converging");
        await this.readOnce();
      }
    },
  };
}

/** `n` lines of 1 KiB that share no text (so every publication carries them whole). */
function uniqueLines(n: number): string {
  let text = "";
  for (let i = 0; i < n; i++) {
    let line = "";
    while (line.length < 1023) line += crypto.randomUUID();
    text += `${line.slice(0, 1023)}\n`;
  }
  return text;
}

describe("a slow SSE subscriber", () => {
  it("that stops reading while the producer pushes 6 MiB: the DO queues at most 1 MiB for it, and when it reads again it converges on view().state via a fresh base", async () => {
    const name = "slow-sse";
    const stub = stubFor(name) as StatsStub;
    value(await stub.start(startRequest(name, "external", { name: "t" })));
    const res = await stub.fetch("http://do/events");
    const body = res.body;
    if (!body) throw new Error("SSE response without a body");
    const client = sseClient(body);
    let maxQueued = 0;
    for (let i = 0; i < 96; i++) {
      value(await stub.produce([{ write: `${uniqueLines(64)}call ${i}\n` }]));
      await stub.flushOutput();
      maxQueued = Math.max(maxQueued, (await stub.sseStats()).maxQueuedBytes);
    }
    const stats = await stub.sseStats();
    expect(stats.streams).toBe(1);
    expect(maxQueued).toBeLessThanOrEqual(MAX_SSE_QUEUED_BYTES);
    expect(maxQueued).toBeGreaterThan(MAX_SSE_QUEUED_BYTES / 2);
    expect(stats.resets).toBeGreaterThanOrEqual(1);

    await client.readUntil((await view(name)).state);
    // About one full queue plus a base, not the ~4.9 MB of deltas it skipped.
    expect(client.bytesRead).toBeLessThan(2 * MAX_SSE_QUEUED_BYTES);
    expect(client.bases).toBeGreaterThanOrEqual(2);
    expect(textOf(client.replica.state).endsWith("call 95\n")).toBe(true);

    // Caught up, it follows deltas again, and ends on the settled result.
    value(await stub.produce([{ write: "last\n" }], { isError: false }));
    while (!client.done) await client.readOnce();
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(client.replica.state?.content).toEqual(poll.result.content);
    expect(client.events.at(-1)).toMatchObject({ type: "tool_end", isError: false });
    await waitFor("stream forgotten", async () =>
      (await stub.sseStats()).streams === 0 ? true : undefined,
    );
  });
});

const START: ToolStartEvent = {
  type: "tool_start",
  runId: "r",
  turnId: "t",
  toolCallId: "c",
  toolName: "external",
  args: {},
};

/** A state and one publication after it (a write), as the DO would fan out. */
function publication(): { before: ToolOutputState; ops: Op[]; after: ToolOutputState } {
  const sink = new ToolOutputSink({ policy: DEFAULT_OUTPUT_POLICY, onChange: () => {} });
  const before = sink.snapshot();
  sink.flush();
  sink.output.write("hello\n");
  const ops = sink.flush();
  // `apply` may change its target in place; `before` stays the state before the write.
  const after = apply(
    structuredClone(before) as unknown as JsonValue,
    ops,
  ) as unknown as ToolOutputState;
  return { before, ops, after };
}

function streamWithRoom(room: number, before: ToolOutputState): SseStream {
  const probe = new SseStream({
    start: START,
    state: before,
    seq: 1,
    newEncoder: encoder,
    onCancel: () => {},
  });
  return new SseStream({
    start: START,
    state: before,
    seq: 1,
    newEncoder: encoder,
    onCancel: () => {},
    maxQueuedBytes: probe.queuedBytes + room,
  });
}

describe("SseStream's bound", () => {
  const { before, ops, after } = publication();
  const greeting = new SseStream({
    start: START,
    state: before,
    seq: 1,
    newEncoder: encoder,
    onCancel: () => {},
  });
  const sized = new SseStream({
    start: START,
    state: before,
    seq: 1,
    newEncoder: encoder,
    onCancel: () => {},
  });
  sized.update(ops, after, 2);
  const delta = sized.queuedBytes - greeting.queuedBytes;

  it("queues an update that fills it exactly, or leaves a byte over", () => {
    for (const room of [delta, delta + 1]) {
      const stream = streamWithRoom(room, before);
      const queued = stream.queuedBytes;
      stream.update(ops, after, 2);
      expect(stream.queuedBytes).toBe(queued + delta);
      expect(stream.behind).toBe(false);
      expect(stream.resets).toBe(0);
    }
  });

  it("drops an update one byte over, then catches the reader up with a base once it reads", async () => {
    const stream = streamWithRoom(delta - 1, before);
    const queued = stream.queuedBytes;
    stream.update(ops, after, 2);
    expect(stream.queuedBytes).toBe(queued);
    expect(stream.behind).toBe(true);
    expect(stream.resets).toBe(1);
    const client = sseClient(stream.readable);
    await client.readUntil(after);
    expect(client.bases).toBe(2);
    expect(stream.behind).toBe(false);
    stream.end(false, 2);
    while (!client.done) await client.readOnce();
    expect(client.events.map((e) => e.type)).toEqual([
      "tool_start",
      "tool_update",
      "tool_update",
      "tool_end",
    ]);
  });

  it("ends a stream that is behind on a base of the final state, then tool_end", async () => {
    const stream = streamWithRoom(delta - 1, before);
    stream.update(ops, after, 2);
    expect(stream.behind).toBe(true);
    stream.end(false, 2);
    const client = sseClient(stream.readable);
    while (!client.done) await client.readOnce();
    expect(client.replica.state).toEqual(after);
    expect(client.events.at(-1)).toMatchObject({ type: "tool_end" });
  });
});
