import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../src/publish/index.ts";

describe("FakeClock", () => {
  it("fires due timers in order, each at its own due time", () => {
    const clock = new FakeClock(1000);
    const fired: [string, number][] = [];
    clock.setTimeout(() => fired.push(["b", clock.now()]), 20);
    clock.setTimeout(() => fired.push(["a", clock.now()]), 10);
    clock.setTimeout(() => fired.push(["c", clock.now()]), 20);
    clock.advance(15);
    expect(fired).toEqual([["a", 1010]]);
    expect(clock.now()).toBe(1015);
    clock.advance(5);
    expect(fired).toEqual([
      ["a", 1010],
      ["b", 1020],
      ["c", 1020],
    ]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("fires timers scheduled by timers within the same advance", () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 30);
    }, 10);
    clock.advance(100);
    expect(fired).toEqual([10, 40]);
  });

  it("cancels timers and reports what is pending", () => {
    const clock = new FakeClock();
    const handle = clock.setTimeout(() => {
      throw new Error("cancelled timer fired");
    }, 10);
    clock.setTimeout(() => {}, 50);
    expect(clock.pendingTimers).toBe(2);
    expect(clock.nextTimerAt).toBe(10);
    clock.clearTimeout(handle);
    clock.clearTimeout("not a handle");
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt).toBe(50);
    clock.advance(100);
    expect(clock.nextTimerAt).toBeUndefined();
  });

  it("refuses to move backwards", () => {
    const clock = new FakeClock(50);
    expect(() => clock.advance(-1)).toThrow(/ms must be >= 0, got -1/);
    expect(() => clock.advanceTo(10)).toThrow(/10 is before now \(50\)/);
  });
});
