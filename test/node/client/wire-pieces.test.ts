import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  DEFAULT_BACKOFF,
  describeTruncation,
  formatBytes,
  streamUrl,
} from "../../../src/client/index.ts";
import type { Truncation } from "../../../src/core/output/types.ts";

const base: Truncation = {
  truncated: true,
  truncatedBy: "bytes",
  totalLines: 34567,
  totalBytes: 2_000_000,
  outputLines: 2000,
  outputBytes: 51200,
  maxLines: 2000,
  maxBytes: 51200,
  lastLinePartial: false,
  firstLineExceedsLimit: false,
};

describe("describeTruncation", () => {
  it("says in plain words what is shown, under which limit, and where the rest is", () => {
    expect(describeTruncation({ ...base, spillPath: ".toolwire/spill/x.log" }, "tail")).toBe(
      "Showing the last 2,000 of 34,567 lines (50 KB limit). Full output: .toolwire/spill/x.log",
    );
    expect(describeTruncation({ ...base, truncatedBy: "lines" }, "head")).toBe(
      "Showing the first 2,000 of 34,567 lines (2,000-line limit).",
    );
    expect(
      describeTruncation({ ...base, firstLineExceedsLimit: true, outputLines: 1, totalLines: 1 }),
    ).toBe("Showing 50 KB of 1.9 MB (a single line is longer than the 50 KB limit).");
  });

  it("is silent when nothing was cut", () => {
    expect(describeTruncation({ ...base, truncated: false, truncatedBy: null })).toBeNull();
  });

  it("formats sizes at, under and over each unit", () => {
    expect([1, 1023, 1024, 1536, 51200, 1024 * 1024 - 1, 1024 * 1024].map(formatBytes)).toEqual([
      "1 byte",
      "1,023 bytes",
      "1 KB",
      "1.5 KB",
      "50 KB",
      "1,024 KB",
      "1 MB",
    ]);
  });
});

describe("streamUrl", () => {
  it("turns any URL the API hands out into the wanted stream, keeping the token", () => {
    expect(streamUrl("http://h:8787/view/call_1?token=t.1", "socket")).toBe(
      "ws://h:8787/v1/invocations/call_1/socket?token=t.1",
    );
    expect(streamUrl("wss://h/v1/invocations/c/socket?token=t", "sse")).toBe(
      "https://h/v1/invocations/c/events?token=t",
    );
    expect(streamUrl({ baseUrl: "https://h/base", id: "a b", token: "t" }, "socket")).toBe(
      "wss://h/base/v1/invocations/a%20b/socket?token=t",
    );
  });
});

describe("backoffDelay", () => {
  it("doubles from the first delay, stays within half to all of the ceiling, and is capped", () => {
    expect(backoffDelay(0, DEFAULT_BACKOFF, () => 0)).toBe(125);
    expect(backoffDelay(0, DEFAULT_BACKOFF, () => 1)).toBe(250);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 1)).toBe(2000);
    expect(backoffDelay(5, DEFAULT_BACKOFF, () => 1)).toBe(8000);
    expect(backoffDelay(50, DEFAULT_BACKOFF, () => 0)).toBe(4000);
  });
});
