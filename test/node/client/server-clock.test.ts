import { describe, expect, it } from "vitest";
import { ServerClock } from "../../../src/client/viewer/server-clock.ts";

const at = (iso: string) => Date.parse(iso);

describe("ServerClock", () => {
  it("measures a browser clock that is ten minutes fast to within the Date header's second", () => {
    const clock = new ServerClock();
    // The server said 12:00:00 (truncated to the second) during a request the browser timed at 12:10:00.2–.4.
    clock.observe(
      "Sun, 29 Nov 2026 12:00:00 GMT",
      at("2026-11-29T12:10:00.200Z"),
      at("2026-11-29T12:10:00.400Z"),
    );
    expect(clock.offsetMs).toBeGreaterThan(-600_400);
    expect(clock.offsetMs).toBeLessThanOrEqual(-599_200);
    expect(clock.now(at("2026-11-29T12:10:05.000Z"))).toBeGreaterThanOrEqual(
      at("2026-11-29T12:00:04.600Z"),
    );
    expect(clock.now(at("2026-11-29T12:10:05.000Z"))).toBeLessThanOrEqual(
      at("2026-11-29T12:00:05.800Z"),
    );
  });

  it("leaves a clock that agrees with the server alone", () => {
    const clock = new ServerClock();
    clock.observe(
      "Sun, 29 Nov 2026 12:00:00 GMT",
      at("2026-11-29T12:00:00.300Z"),
      at("2026-11-29T12:00:00.500Z"),
    );
    expect(clock.offsetMs).toBe(0);
  });

  it("narrows the offset with each answer", () => {
    const clock = new ServerClock();
    // Browser 5 s slow: the second answer pins it more tightly than the first.
    clock.observe(
      "Sun, 29 Nov 2026 12:00:05 GMT",
      at("2026-11-29T11:59:59.000Z"),
      at("2026-11-29T12:00:01.000Z"),
    );
    const first = clock.offsetMs;
    clock.observe(
      "Sun, 29 Nov 2026 12:00:10 GMT",
      at("2026-11-29T12:00:05.100Z"),
      at("2026-11-29T12:00:05.200Z"),
    );
    expect(clock.offsetMs).toBeGreaterThanOrEqual(4_800);
    expect(clock.offsetMs).toBeLessThanOrEqual(5_900);
    expect(Math.abs(clock.offsetMs - 5_000)).toBeLessThanOrEqual(Math.abs(first - 5_000));
  });

  it("ignores a missing or unreadable Date header", () => {
    const clock = new ServerClock();
    clock.observe(null, 0, 10);
    clock.observe("yesterday", 0, 10);
    expect(clock.offsetMs).toBe(0);
  });
});
