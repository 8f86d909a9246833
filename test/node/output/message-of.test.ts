import { describe, expect, it } from "vitest";
import { messageOf } from "../../../src/core/output/index.ts";
import { messageOf as protocolMessageOf } from "../../../src/protocol/index.ts";

describe("messageOf", () => {
  it("reads an Error's message, its name when the message is empty, a string as it is", () => {
    expect(messageOf(new TypeError("bad"))).toBe("bad");
    expect(messageOf(new RangeError(""))).toBe("RangeError");
    expect(messageOf("plain")).toBe("plain");
  });

  it("writes anything else as JSON, and what JSON cannot hold with String", () => {
    expect(messageOf({ code: 7 })).toBe('{"code":7}');
    expect(messageOf(undefined)).toBe("undefined");
    const loop: { self?: unknown } = {};
    loop.self = loop;
    expect(messageOf(loop)).toBe("[object Object]");
    expect(messageOf(10n)).toBe("10");
  });

  it("is the same function in the protocol as in the core", () => {
    expect(protocolMessageOf).toBe(messageOf);
  });
});
