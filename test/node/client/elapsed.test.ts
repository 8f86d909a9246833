import { describe, expect, it } from "vitest";
import { formatElapsed } from "../../../src/client/elapsed.ts";

describe("formatElapsed (the viewer's clock and the run view's calls)", () => {
  it("shows tenths of a second up to just under a minute", () => {
    expect(formatElapsed(0)).toBe("0.0 s");
    expect(formatElapsed(1_250)).toBe("1.3 s");
    expect(formatElapsed(59_940)).toBe("59.9 s");
  });

  it("switches to m:ss at one minute and to h:mm:ss at one hour", () => {
    expect(formatElapsed(60_000)).toBe("1:00");
    expect(formatElapsed(75_400)).toBe("1:15");
    expect(formatElapsed(3_599_999)).toBe("59:59");
    expect(formatElapsed(3_600_000)).toBe("1:00:00");
    expect(formatElapsed(3_725_000)).toBe("1:02:05");
  });
});
