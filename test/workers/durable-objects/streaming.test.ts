import { describe, expect, it } from "vitest";
import {
  connectSocket,
  openEvents,
  startRequest,
  stubFor,
  textOf,
  value,
  view,
  waitFor,
} from "./helpers.ts";

/** Streams `n` writes through the producer API, one forced publication each. */
async function produceLines(name: string, from: number, n: number): Promise<void> {
  const stub = stubFor(name);
  for (let i = from; i < from + n; i++) {
    value(await stub.produce([{ write: `line ${i}\n` }, { details: [["s", ["n"], i]] }]));
    await stub.flushOutput();
  }
}

describe("WebSocket fan-out", () => {
  it("a subscriber joining mid-stream gets tool_start, a base, then deltas; its fold tracks view() and ends at the result", async () => {
    const stub = stubFor("midstream");
    value(await stub.start(startRequest("midstream", "external", { name: "agent_tool" })));
    await produceLines("midstream", 1, 10);
    const sub = await connectSocket("midstream");
    await waitFor("greeting", () => (sub.events.length >= 2 ? true : undefined));
    expect(sub.events[0]).toMatchObject({
      type: "tool_start",
      toolCallId: "midstream",
      toolName: "external",
    });
    expect(sub.events[1]).toMatchObject({ type: "tool_update" });
    expect(sub.bases).toBe(1);
    await sub.converge((await view("midstream")).state);
    for (let round = 0; round < 3; round++) {
      await produceLines("midstream", 11 + round * 5, 5);
      await sub.converge((await view("midstream")).state);
    }
    expect(sub.bases).toBe(1);
    value(await stub.produce([{ write: "bye\n" }], { isError: false }));
    await sub.untilEnded();
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(sub.state?.content).toEqual(poll.result.content);
    expect(sub.state?.details).toEqual(poll.result.details);
    expect(sub.events.at(-1)).toEqual({
      type: "tool_end",
      runId: "run-1",
      turnId: "turn-1",
      toolCallId: "midstream",
      isError: false,
    });
  });

  it("two subscribers with independent encoders both converge on the result of a running tool", async () => {
    const stub = stubFor("two-subs");
    value(await stub.start(startRequest("two-subs", "emit", { lines: 60, intervalMs: 5 })));
    const a = await connectSocket("two-subs");
    await waitFor("some output", async () =>
      textOf((await view("two-subs")).state).includes("20 line") ? true : undefined,
    );
    const b = await connectSocket("two-subs");
    await Promise.all([a.untilEnded(), b.untilEnded()]);
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    for (const sub of [a, b]) {
      expect(sub.state?.content).toEqual(poll.result.content);
      expect(sub.state?.details).toEqual({ emitted: 60 });
    }
    // Each stream started from its own base and decoded the rest with its own tables.
    expect(a.bases).toBe(1);
    expect(b.bases).toBe(1);
  });

  it('answers {"type":"resync"} after a publication with a fresh base', async () => {
    const stub = stubFor("resync");
    value(await stub.start(startRequest("resync", "external", { name: "t" })));
    await produceLines("resync", 1, 3);
    const sub = await connectSocket("resync");
    await produceLines("resync", 4, 1);
    await sub.converge((await view("resync")).state);
    sub.socket.send(JSON.stringify({ type: "resync" }));
    await waitFor("second base", () => (sub.bases === 2 ? true : undefined));
    await produceLines("resync", 5, 2);
    await sub.converge((await view("resync")).state);
  });

  it("a late joiner to a settled invocation gets tool_start, a base of the result and tool_end", async () => {
    const stub = stubFor("late");
    value(await stub.start(startRequest("late", "emit", { lines: 3 })));
    const poll = value(await stub.result(10_000));
    if (poll.status !== "settled") throw new Error("not settled");
    const sub = await connectSocket("late");
    await sub.untilEnded();
    expect(sub.events.map((e) => e.type)).toEqual(["tool_start", "tool_update", "tool_end"]);
    expect(sub.state?.content).toEqual(poll.result.content);
  });
});

describe("SSE fan-out", () => {
  it("streams the same events as text/event-stream with id = storage seq, base first", async () => {
    const stub = stubFor("sse");
    value(await stub.start(startRequest("sse", "external", { name: "t" })));
    await produceLines("sse", 1, 3);
    const { sub, ids, finished } = await openEvents("sse");
    await produceLines("sse", 4, 3);
    value(await stub.produce([], { isError: false }));
    await finished;
    const types = sub.events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(["tool_start", "tool_update"]);
    expect(types.at(-1)).toBe("tool_end");
    expect(types.filter((t) => t === "tool_update").length).toBeGreaterThanOrEqual(2);
    expect(sub.bases).toBe(1);
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThanOrEqual(ids[i - 1]!);
    expect(ids[2]).toBeGreaterThan(ids[1]!);
    expect(textOf(sub.state)).toBe("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n");
  });
});

describe("subscription requests", () => {
  it("refuses a socket without Upgrade (426), an unknown path and an unknown invocation (404)", async () => {
    const stub = stubFor("subs-errors");
    expect((await stub.fetch("http://do/socket")).status).toBe(404);
    value(await stub.start(startRequest("subs-errors", "external", { name: "t" })));
    const plain = await stub.fetch("http://do/socket");
    expect(plain.status).toBe(426);
    expect(plain.headers.get("Upgrade")).toBe("websocket");
    expect((await stub.fetch("http://do/elsewhere")).status).toBe(404);
  });

  it("an SSE subscriber to a settled invocation gets tool_start, a base and tool_end, then the stream ends", async () => {
    const stub = stubFor("sse-late");
    value(await stub.start(startRequest("sse-late", "external", { name: "t" })));
    value(await stub.produce([{ write: "done\n" }], { isError: true }));
    const { sub, finished } = await openEvents("sse-late");
    await finished;
    expect(sub.events.map((e) => e.type)).toEqual(["tool_start", "tool_update", "tool_end"]);
    expect(sub.events.at(-1)).toMatchObject({ isError: true });
    expect(textOf(sub.state)).toBe("done\n");
  });
});
