import { describe, expect, it } from "vitest";
import { AdaptivePublisher, systemClock } from "../../src/core/publish/index.ts";
import { FakeClock } from "./fake-clock.ts";

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

describe("systemClock", () => {
  it("runs and cancels real timers", async () => {
    const fired: string[] = [];
    const cancelled = systemClock.setTimeout(() => fired.push("cancelled"), 0);
    systemClock.clearTimeout(cancelled);
    await new Promise<void>((resolve) =>
      systemClock.setTimeout(() => {
        fired.push("ran");
        resolve();
      }, 0),
    );
    expect(fired).toEqual(["ran"]);
    expect(systemClock.now()).toBeGreaterThan(0);
  });

  it("drives a publisher's trailing publication by default", async () => {
    const published: string[] = [];
    let text = "";
    let sent = 0;
    let done: () => void = () => {};
    const trailing = new Promise<void>((resolve) => {
      done = resolve;
    });
    const publisher = new AdaptivePublisher<string>({
      update: () => {
        const delta = text.slice(sent);
        sent = text.length;
        return delta || null;
      },
      measure: (delta) => delta.length,
      publish: (delta) => {
        published.push(delta);
        if (published.length === 2) done();
      },
      onError: (error) => {
        throw error;
      },
      minIntervalMs: 1,
    });
    text += "a";
    publisher.markDirty();
    text += "b";
    publisher.markDirty();
    await trailing;
    expect(published).toEqual(["a", "b"]);
    publisher.dispose();
  });
});
