import { describe, expect, it } from "vitest";
import { CallIdError, callIdentity, sessionCallId } from "../../../src/mcp/identity.ts";

describe("callIdentity", () => {
  it("takes the client's _meta id first, in either key", async () => {
    expect(
      await callIdentity({
        meta: { "io.toolwire/callId": "build-42" },
        sessionId: "s",
        requestId: 1,
      }),
    ).toEqual({
      id: "build-42",
      from: "meta",
    });
    expect(await callIdentity({ meta: { "io.toolwire/invocation": { id: "call_7" } } })).toEqual({
      id: "call_7",
      from: "meta",
    });
  });

  it("accepts an id of 128 characters and refuses 129, naming the field", async () => {
    const at = `a${"b".repeat(127)}`;
    expect((await callIdentity({ meta: { "io.toolwire/callId": at } })).id).toBe(at);
    await expect(callIdentity({ meta: { "io.toolwire/callId": `${at}c` } })).rejects.toThrow(
      CallIdError,
    );
    await expect(callIdentity({ meta: { "io.toolwire/callId": "../x" } })).rejects.toThrow(
      /_meta\["io.toolwire\/callId"\] must be 1-128 characters/,
    );
    await expect(callIdentity({ meta: { "io.toolwire/callId": 5 } })).rejects.toThrow(/got 5/);
  });

  it("derives the same id for the same session and request, another for any other", async () => {
    const a = await callIdentity({ sessionId: "ms1.x", requestId: 3 });
    expect(a.from).toBe("session");
    expect(a.id).toMatch(/^mcp_[0-9a-f]{32}$/);
    expect((await callIdentity({ sessionId: "ms1.x", requestId: 3 })).id).toBe(a.id);
    expect(await sessionCallId("ms1.x", 3)).toBe(a.id);
    expect(await sessionCallId("ms1.x", "3")).not.toBe(a.id);
    expect(await sessionCallId("ms1.y", 3)).not.toBe(a.id);
  });

  it("gives a fresh id per call without _meta or session", async () => {
    const one = await callIdentity({ requestId: 1 });
    const two = await callIdentity({ requestId: 1 });
    expect(one.from).toBe("fresh");
    expect(one.id).not.toBe(two.id);
  });
});
