import { describe, expect, it } from "vitest";
import {
  DEFAULT_REJOIN_SECONDS,
  DEFAULT_STREAM_STRETCH_SECONDS,
  rejoinBudgetMs,
  streamStretchMs,
} from "../../../src/tools/bash.ts";

describe("bash's DO settings", () => {
  it("SANDBOX_STREAM_WINDOW_SECONDS: positive seconds; anything else is 10 s", () => {
    const fallback = DEFAULT_STREAM_STRETCH_SECONDS * 1000;
    expect(streamStretchMs({})).toBe(fallback);
    expect(streamStretchMs({ SANDBOX_STREAM_WINDOW_SECONDS: "1" })).toBe(1000);
    expect(streamStretchMs({ SANDBOX_STREAM_WINDOW_SECONDS: "0.001" })).toBe(1);
    for (const bad of ["0", "-0.5", "ten", ""]) {
      expect(streamStretchMs({ SANDBOX_STREAM_WINDOW_SECONDS: bad })).toBe(fallback);
    }
  });

  it("SANDBOX_REJOIN_SECONDS: positive seconds; anything else is 30 s", () => {
    const fallback = DEFAULT_REJOIN_SECONDS * 1000;
    expect(rejoinBudgetMs({})).toBe(fallback);
    expect(rejoinBudgetMs({ SANDBOX_REJOIN_SECONDS: "2" })).toBe(2000);
    expect(rejoinBudgetMs({ SANDBOX_REJOIN_SECONDS: "0.001" })).toBe(1);
    for (const bad of ["0", "-1", "soon", ""]) {
      expect(rejoinBudgetMs({ SANDBOX_REJOIN_SECONDS: bad })).toBe(fallback);
    }
  });
});
