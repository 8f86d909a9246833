import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseEventId, sessionEventStore } from "../../../src/mcp/event-store.ts";
import type { SessionStore } from "../../../src/mcp/port.ts";

/** The session store over the real McpSessionDO (as src/worker/mcp-route.ts builds it). */
function sessions(): SessionStore {
  const session = (id: string) => env.MCP_SESSIONS.getByName(id);
  return {
    isTerminated: (id) => session(id).isTerminated(),
    terminate: (id) => session(id).terminate(),
    rememberCall: (id, requestId, invocationId) =>
      session(id).rememberCall(requestId, invocationId),
    callOf: async (id, requestId) => (await session(id).callOf(requestId)) ?? undefined,
    appendEvent: (id, streamId, message) => session(id).appendEvent(streamId, message),
    eventsAfter: (id, streamId, seq) => session(id).eventsAfter(streamId, seq),
  };
}

describe("parseEventId", () => {
  it("reads <stream>_<number>; a stream id of 64 characters and 10 digits, not 65 or 11", () => {
    expect(parseEventId("3f2a-9_4")).toEqual({ streamId: "3f2a-9", seq: 4 });
    const stream64 = "a".repeat(64);
    expect(parseEventId(`${stream64}_1`)?.streamId).toBe(stream64);
    expect(parseEventId(`${stream64}a_1`)).toBeUndefined();
    expect(parseEventId("s_1234567890")?.seq).toBe(1_234_567_890);
    expect(parseEventId("s_12345678901")).toBeUndefined();
    for (const bad of ["", "s", "s_", "_1", "../x_1", "s_1_2", "s_-1", "s_1.5"]) {
      expect(parseEventId(bad)).toBeUndefined();
    }
  });
});

describe("sessionEventStore", () => {
  it("replays what followed an event, in order, from another request's store", async () => {
    const writer = sessionEventStore(sessions(), "ms1.event-store-test");
    const priming = await writer.storeEvent("stream-1", {} as never);
    await writer.storeEvent("stream-1", {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 1, progress: 5 },
    });
    await writer.storeEvent("stream-2", { jsonrpc: "2.0", id: 9, result: {} });
    await writer.storeEvent("stream-1", { jsonrpc: "2.0", id: 3, result: { content: [] } });
    await writer.responded;

    const reader = sessionEventStore(sessions(), "ms1.event-store-test");
    const sent: Array<[string, unknown]> = [];
    const stream = await reader.replayEventsAfter(priming, {
      send: async (id, message) => {
        sent.push([id, message]);
      },
    });
    expect(stream).toBe("stream-1");
    expect(sent.map(([id]) => id)).toEqual(["stream-1_2", "stream-1_3"]);
    expect(sent[1]?.[1]).toMatchObject({ id: 3 });
    await expect(reader.replayEventsAfter("nope", { send: async () => {} })).rejects.toThrow(
      /not an event of this server/,
    );
  });
});
