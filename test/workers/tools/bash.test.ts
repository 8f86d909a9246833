import { describe, expect, it } from "vitest";
import { MAX_WINDOW_BYTES, MAX_WINDOW_LINES } from "../../../src/protocol/index.ts";
import { bashParams } from "../../../src/tools/bash.ts";

describe("bash's window arguments", () => {
  const edges = (max: number) => [undefined, 0, 1, max - 1, max, max + 1];

  it("accept head, tail and maxBytes from 1 to their caps, and refuse 0 and one past", () => {
    for (const head of edges(MAX_WINDOW_LINES)) {
      for (const tail of edges(MAX_WINDOW_LINES)) {
        for (const maxBytes of edges(MAX_WINDOW_BYTES)) {
          const args = { command: "true", head, tail, maxBytes };
          const inRange = (v: number | undefined, max: number) =>
            v === undefined || (v >= 1 && v <= max);
          const ok =
            inRange(head, MAX_WINDOW_LINES) &&
            inRange(tail, MAX_WINDOW_LINES) &&
            inRange(maxBytes, MAX_WINDOW_BYTES) &&
            (head ?? 0) + (tail ?? 0) <= MAX_WINDOW_LINES;
          expect(bashParams.safeParse(args).success, JSON.stringify(args)).toBe(ok);
        }
      }
    }
  });

  it("head + tail may sum to the line cap, not one more", () => {
    const half = MAX_WINDOW_LINES / 2;
    expect(bashParams.safeParse({ command: "x", head: half, tail: half }).success).toBe(true);
    const over = bashParams.safeParse({ command: "x", head: half, tail: half + 1 });
    expect(over.success).toBe(false);
    expect(over.error?.issues[0]?.message).toBe(
      `head + tail must be at most ${MAX_WINDOW_LINES} lines`,
    );
  });

  it("refuse fractions and strings", () => {
    for (const bad of [{ head: 1.5 }, { tail: "10" }, { maxBytes: 2.5 }]) {
      expect(bashParams.safeParse({ command: "x", ...bad }).success).toBe(false);
    }
  });
});

describe("bash's command length", () => {
  const parse = (command: string) => bashParams.safeParse({ command });

  it("takes a command of exactly 131,071 bytes and one just under; one byte more is refused, naming the limit", () => {
    expect(parse("x".repeat(131_070)).success).toBe(true);
    expect(parse("x".repeat(131_071)).success).toBe(true);
    const over = parse("x".repeat(131_072));
    expect(over.success).toBe(false);
    expect(JSON.stringify(over.error?.issues)).toContain("at most 131,071 bytes");
  });

  it("counts bytes, not characters: 65,536 two-byte characters are one byte too many", () => {
    expect(parse("é".repeat(65_535)).success).toBe(true);
    expect(parse("é".repeat(65_536)).success).toBe(false);
  });
});
