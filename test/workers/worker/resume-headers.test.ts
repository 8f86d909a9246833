// Resuming through the Worker: `Last-Event-ID` and `?after=` reach the Durable Object.
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../../../src/core/events/types.ts";
import { call, create, postJson } from "./helpers.ts";

async function socketFrames(path: string, count: number): Promise<HarnessEvent[]> {
  const res = await call(path, { headers: { Upgrade: "websocket" } }, false);
  expect(res.status).toBe(101);
  const socket = res.webSocket as WebSocket;
  const frames: HarnessEvent[] = [];
  const done = new Promise<void>((resolve) => {
    socket.addEventListener("message", (e) => {
      frames.push(JSON.parse(e.data as string) as HarnessEvent);
      if (frames.length === count) resolve();
    });
  });
  socket.accept();
  await done;
  socket.close();
  return frames;
}

describe("resuming through the Worker", { timeout: 20_000 }, () => {
  it("passes ?after= on the socket and Last-Event-ID on the event stream to the object", async () => {
    const created = await create({ tool: "external", args: { name: "r" } });
    const out = `/v1/invocations/${created.id}/output`;
    // The first line is long, so that two one-line deltas cost less than a base.
    for (const [seq, line] of [`${"=".repeat(2000)}\n`, "b\n", "c\n"].entries()) {
      expect((await postJson(out, { calls: [{ write: line }], seq })).status).toBe(200);
    }
    const socket = new URL(created.socketUrl);
    const greeting = await socketFrames(socket.pathname + socket.search, 2);
    const base = greeting[1];
    if (base?.type !== "tool_update" || base.seq === undefined) throw new Error("no seq");
    expect(base.ops[0]?.[0]).toBe("r");
    const resumed = await socketFrames(
      `${socket.pathname}${socket.search}&after=${base.seq - 2}`,
      3,
    );
    expect(resumed.map((e) => e.type)).toEqual(["tool_start", "tool_update", "tool_update"]);
    // Each resumed batch starts with its append (then the totals); a path's second use is
    // defined first by a wire op of its own (["#", id, path]), as the reference Chord does.
    const firstVerb = (ops: readonly (readonly unknown[])[]) =>
      ops.map((op) => op[0]).find((verb) => verb !== "#");
    expect(
      resumed.flatMap((e) => (e.type === "tool_update" ? [e.seq, firstVerb(e.ops)] : [])),
    ).toEqual([base.seq - 1, "a", base.seq, "a"]);

    const events = new URL(created.eventsUrl);
    const res = await call(
      events.pathname + events.search,
      { headers: { "Last-Event-ID": String(base.seq - 1) } },
      false,
    );
    const reader = (res.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 2) text += (await reader.read()).value ?? "";
    await reader.cancel();
    const frames = text.split("\n\n").filter(Boolean);
    expect(frames[0]).toMatch(new RegExp(`^id: ${base.seq - 1}\\ndata: \\{"type":"tool_start"`));
    expect(frames[1]).toMatch(new RegExp(`^id: ${base.seq}\\ndata: \\{`));
    expect(frames[1]).toContain('"type":"tool_update"');
    expect(frames[1]).not.toContain('[["r"');
  });
});
