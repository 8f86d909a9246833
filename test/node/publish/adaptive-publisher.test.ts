import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AdaptivePublisher,
  type AdaptivePublisherOptions,
} from "../../../src/core/publish/index.ts";
import { FakeClock } from "../../support/fake-clock.ts";

interface Event {
  at: number;
  delta: string;
}

/** An append-only text whose deltas are the text added since the last publication. */
function appendLog(options: Partial<AdaptivePublisherOptions<string>> = {}) {
  const clock = new FakeClock();
  let text = "";
  let publishedUpTo = 0;
  const events: Event[] = [];
  const errors: { error: unknown; delta: string | undefined }[] = [];
  const publisher = new AdaptivePublisher<string>({
    update: () => {
      if (publishedUpTo === text.length) return null;
      const delta = text.slice(publishedUpTo);
      publishedUpTo = text.length;
      return delta;
    },
    measure: (delta) => delta.length,
    publish: (delta) => {
      events.push({ at: clock.now(), delta });
    },
    onError: (error, delta) => errors.push({ error, delta }),
    clock,
    ...options,
  });
  return {
    clock,
    events,
    errors,
    publisher,
    get text() {
      return text;
    },
    write(chunk: string) {
      text += chunk;
      publisher.markDirty();
    },
    /** A change the producer forgot to mark dirty. */
    changeQuietly(chunk: string) {
      text += chunk;
    },
    /** Concatenation of every delivered delta: must equal the text, each byte once. */
    get delivered() {
      return events.map((e) => e.delta).join("");
    },
  };
}

function gaps(events: Event[]): number[] {
  return events.slice(1).map((e, i) => e.at - events[i]!.at);
}

describe("AdaptivePublisher", () => {
  it("publishes a small output at once, then the residue on completion", () => {
    const h = appendLog();
    h.write("hello ");
    expect(h.events).toEqual([{ at: 0, delta: "hello " }]);
    h.clock.advance(20);
    h.write("world");
    expect(h.events).toHaveLength(1);
    // The residue waits for its trailing publication.
    expect(h.clock.pendingTimers).toBe(1);
    expect(h.publisher.flush(true)).toBe(true);
    expect(h.events).toEqual([
      { at: 0, delta: "hello " },
      { at: 20, delta: "world" },
    ]);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.events).toHaveLength(2);
    h.publisher.dispose();
    expect(h.delivered).toBe("hello world");
  });

  it("publishes isolated writes immediately and fast writes once per 100 ms", () => {
    const h = appendLog();
    for (let i = 0; i < 5; i++) {
      h.write(`isolated ${i}\n`);
      expect(h.events.at(-1)).toEqual({ at: i * 250, delta: `isolated ${i}\n` });
      h.clock.advance(250);
    }
    expect(h.events).toHaveLength(5);
    const fastStart = h.clock.now();
    h.events.length = 0;
    for (let i = 0; i < 100; i++) {
      h.write("x");
      h.clock.advance(10);
    }
    h.clock.advance(1000);
    // 1 s of writes every 10 ms: one leading publication, then one every 100 ms.
    expect(h.events.map((e) => e.at - fastStart)).toEqual([
      0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000,
    ]);
    expect(h.events[0]!.delta).toBe("x");
    // Writes at 10..90 collapse into the publication at 100; the one at 100 waits for 200.
    expect(h.events[1]!.delta).toBe("x".repeat(9));
    expect(h.events[2]!.delta).toBe("x".repeat(10));
    expect(h.delivered).toBe("x".repeat(100));
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("publishes a write at, but not just before, the minimum interval", () => {
    const h = appendLog();
    h.write("a");
    h.clock.advance(100);
    h.write("b"); // exactly at the deadline: immediate
    h.clock.advance(99);
    h.write("c"); // 1 ms early: waits for the deadline
    expect(h.events.map((e) => [e.at, e.delta])).toEqual([
      [0, "a"],
      [100, "b"],
    ]);
    expect(h.clock.nextTimerAt).toBe(200);
    h.clock.advance(1);
    h.clock.advance(101);
    h.write("d"); // 101 ms after the last: immediate
    expect(h.events.map((e) => [e.at, e.delta])).toEqual([
      [0, "a"],
      [100, "b"],
      [200, "c"],
      [301, "d"],
    ]);
  });

  it("after expedite, publishes the next change at once, once, within its window only", () => {
    const h = appendLog();
    h.write("a");
    h.clock.advance(20);
    h.publisher.expedite(500);
    h.write("echo"); // 20 ms after the last publication: out at once, not at 100
    expect(h.events.map((e) => [e.at, e.delta])).toEqual([
      [0, "a"],
      [20, "echo"],
    ]);
    h.clock.advance(10);
    h.write("more"); // the expedite is spent: this one waits out the spacing again
    expect(h.events).toHaveLength(2);
    expect(h.clock.nextTimerAt).toBe(120);
    h.clock.advance(100);
    expect(h.events.at(-1)).toEqual({ at: 120, delta: "more" });
    // A change after the window is paced as any other.
    h.clock.advance(10);
    h.publisher.expedite(50);
    h.clock.advance(50);
    h.write("late"); // exactly at the end of the window: not expedited
    expect(h.events).toHaveLength(3);
    h.clock.advance(1000);
    expect(h.delivered).toBe("aechomorelate");
  });

  it("cuts a pending trailing publication short when the expedited change comes", () => {
    const h = appendLog();
    h.write("a");
    h.clock.advance(10);
    h.write("b"); // waits for 100
    h.publisher.expedite(500);
    expect(h.events).toHaveLength(1); // expedite alone publishes nothing
    h.clock.advance(10);
    h.write("c");
    expect(h.events.map((e) => [e.at, e.delta])).toEqual([
      [0, "a"],
      [20, "bc"],
    ]);
    h.clock.advance(1000);
    expect(h.events).toHaveLength(2);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("keeps a flood paced: one early publication per expedite", () => {
    const h = appendLog();
    // 1 s of writes every 10 ms, with an expedite every 250 ms (a typist).
    for (let i = 0; i < 100; i++) {
      if (i % 25 === 5) h.publisher.expedite(500);
      h.write("x");
      h.clock.advance(10);
    }
    h.clock.advance(1000);
    // 11 paced publications alone (the test above); 4 expedites add at most 4.
    expect(h.events.length).toBeLessThanOrEqual(11 + 4);
    expect(h.events.length).toBeGreaterThan(11);
    expect(h.delivered).toBe("x".repeat(100));
  });

  it("holds a firehose into a rolling window to the target rate over 60 s", () => {
    const window = 50 * 1024;
    const clock = new FakeClock();
    let appended = 0;
    const events: { at: number; bytes: number }[] = [];
    const publisher = new AdaptivePublisher<number>({
      // The delta of a tail window: what was appended, never more than the window.
      update: () => {
        if (appended === 0) return null;
        const bytes = Math.min(appended, window);
        appended = 0;
        return bytes;
      },
      measure: (bytes) => bytes,
      publish: (bytes) => {
        events.push({ at: clock.now(), bytes });
      },
      onError: (error) => {
        throw error;
      },
      clock,
    });
    // 4 KiB every 10 ms = 400 KiB/s offered, four times the target.
    for (let t = 0; t < 60_000; t += 10) {
      appended += 4096;
      publisher.markDirty();
      clock.advance(10);
    }
    publisher.flush(true);
    publisher.dispose();
    const seconds = 60;
    const bytesPerSecond = events.reduce((sum, e) => sum + e.bytes, 0) / seconds;
    expect(Math.abs(bytesPerSecond - 102400) / 102400).toBeLessThanOrEqual(0.1);
    for (let s = 0; s < seconds; s++) {
      const inSecond = events.filter((e) => e.at >= s * 1000 && e.at < (s + 1) * 1000);
      expect(inSecond.length).toBeLessThanOrEqual(10);
    }
    expect(clock.pendingTimers).toBe(0);
  });

  it("sends one leading and one trailing publication for a burst, and leaves no timer", () => {
    const h = appendLog();
    for (let i = 0; i < 50; i++) {
      h.write(`${i},`);
      h.clock.advance(0.1);
    }
    expect(h.events).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(1);
    h.clock.advance(10_000);
    expect(h.events.map((e) => e.at)).toEqual([0, 100]);
    expect(h.delivered).toBe(h.text);
    expect(h.clock.pendingTimers).toBe(0);
    // Nothing is left to publish: a forced flush finds no delta.
    expect(h.publisher.flush(true)).toBe(false);
  });

  it("delays the next publication after a huge write by bytes / target", () => {
    const h = appendLog();
    h.write("y".repeat(1_024_000));
    expect(h.events).toHaveLength(1);
    h.clock.advance(1000);
    h.write("after");
    // 1,024,000 bytes at 102,400 bytes/s = 10 s.
    expect(h.clock.nextTimerAt).toBe(10_000);
    h.clock.advance(8999);
    expect(h.events).toHaveLength(1);
    h.clock.advance(1);
    expect(h.events.map((e) => e.at)).toEqual([0, 10_000]);
    expect(h.events[1]!.delta).toBe("after");
  });

  it("bypasses pacing once on a forced flush and cancels the trailing timer", () => {
    const h = appendLog();
    h.write("a");
    h.clock.advance(10);
    h.write("b");
    expect(h.clock.pendingTimers).toBe(1);
    h.clock.advance(10);
    expect(h.publisher.flush(true)).toBe(true);
    expect(h.clock.pendingTimers).toBe(0);
    expect(h.events.map((e) => e.at)).toEqual([0, 20]);
    // Pacing resumes from the forced publication.
    h.clock.advance(10);
    h.write("c");
    expect(h.events).toHaveLength(2);
    expect(h.clock.nextTimerAt).toBe(120);
    h.clock.advance(1000);
    expect(h.events.map((e) => [e.at, e.delta])).toEqual([
      [0, "a"],
      [20, "b"],
      [120, "c"],
    ]);
  });

  it("consults update() on a forced flush even when nothing was marked dirty", () => {
    const h = appendLog();
    expect(h.publisher.flush(true)).toBe(false);
    h.changeQuietly("done");
    expect(h.publisher.flush(true)).toBe(true);
    expect(h.events).toEqual([{ at: 0, delta: "done" }]);
    expect(h.publisher.flush(true)).toBe(false);
    expect(h.events).toHaveLength(1);
  });

  it("respects pacing on an unforced flush", () => {
    const h = appendLog();
    h.write("a");
    h.clock.advance(50);
    h.write("b");
    expect(h.publisher.flush()).toBe(false);
    h.clock.advance(50);
    expect(h.events.map((e) => e.delta)).toEqual(["a", "b"]);
    expect(h.publisher.flush()).toBe(false);
  });

  it("reports a throwing consumer and never delivers the same delta twice", () => {
    let calls = 0;
    const seen: string[] = [];
    const h = appendLog({
      publish: (delta) => {
        calls++;
        seen.push(delta);
        if (calls === 1) throw new Error("subscriber gone");
      },
    });
    h.write("first");
    expect(h.errors).toHaveLength(1);
    expect((h.errors[0]!.error as Error).message).toBe("subscriber gone");
    expect(h.errors[0]!.delta).toBe("first");
    h.clock.advance(200);
    h.write("second");
    h.clock.advance(200);
    h.publisher.flush(true);
    expect(seen).toEqual(["first", "second"]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("reports a rejected asynchronous publish to onError", async () => {
    const h = appendLog({ publish: () => Promise.reject(new Error("storage full")) });
    h.write("x");
    await Promise.resolve();
    expect(h.errors.map((e) => [(e.error as Error).message, e.delta])).toEqual([
      ["storage full", "x"],
    ]);
  });

  it("reports a bad measurement and still publishes", () => {
    const h = appendLog({ measure: () => Number.NaN });
    h.write("x");
    expect(h.delivered).toBe("x");
    expect(String(h.errors[0]!.error)).toMatch(
      /measure\(\) must return a finite number >= 0, got NaN/,
    );
  });

  it("waits a caller's floor when it is longer than the interval and the byte spacing, read anew per publication", () => {
    let floor = 500;
    const h = appendLog({ floorMs: () => floor });
    for (let i = 0; i < 200; i++) {
      h.write("x");
      h.clock.advance(10);
    }
    // 2 s of writes every 10 ms: one publication per 500 ms, not per 100 ms.
    expect(h.events.map((e) => e.at)).toEqual([0, 500, 1000, 1500, 2000]);
    floor = 0; // the audience left: the minimum interval rules again from the next one
    h.clock.advance(500);
    for (let i = 0; i < 30; i++) {
      h.write("y");
      h.clock.advance(10);
    }
    h.clock.advance(200);
    expect(h.events.map((e) => e.at)).toEqual([0, 500, 1000, 1500, 2000, 2500, 2600, 2700, 2800]);
    expect(h.delivered).toBe(`${"x".repeat(200)}${"y".repeat(30)}`);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("a floor at, just under and just over the minimum interval spaces by the larger", () => {
    for (const [floor, second] of [
      [100, 100],
      [99, 100],
      [101, 101],
    ] as const) {
      const h = appendLog({ floorMs: () => floor });
      h.write("a");
      h.write("b");
      h.clock.advance(200);
      expect(h.events.map((e) => e.at)).toEqual([0, second]);
    }
  });

  it("reports a floor that is not a finite number >= 0, or throws, and paces without it", () => {
    for (const floorMs of [() => Number.NaN, () => -1, () => Number.POSITIVE_INFINITY]) {
      const h = appendLog({ floorMs });
      h.write("a");
      h.write("b");
      h.clock.advance(100);
      expect(h.events.map((e) => e.at)).toEqual([0, 100]);
      expect(String(h.errors[0]!.error)).toMatch(
        /floorMs\(\) must return a finite number >= 0, got (NaN|-1|Infinity); no floor used/,
      );
    }
    const h = appendLog({
      floorMs: () => {
        throw new Error("count failed");
      },
    });
    h.write("a");
    expect(h.delivered).toBe("a");
    expect(String(h.errors[0]!.error)).toBe("Error: count failed");
  });

  it("leaves no timer after dispose and ignores later writes", () => {
    const h = appendLog();
    h.write("a");
    h.write("b");
    expect(h.clock.pendingTimers).toBe(1);
    h.publisher.dispose();
    expect(h.clock.pendingTimers).toBe(0);
    h.write("c");
    expect(h.publisher.flush(true)).toBe(false);
    h.clock.advance(1000);
    expect(h.clock.pendingTimers).toBe(0);
    expect(h.delivered).toBe("a");
  });

  it("turns a change made during publish into a trailing publication", () => {
    let h: ReturnType<typeof appendLog> | undefined;
    h = appendLog({
      publish: (delta) => {
        h!.events.push({ at: h!.clock.now(), delta });
        if (delta === "a") h!.write("b");
      },
    });
    h.write("a");
    expect(h.events).toHaveLength(1);
    h.clock.advance(100);
    expect(h.events.map((e) => [e.at, e.delta])).toEqual([
      [0, "a"],
      [100, "b"],
    ]);
  });

  it("waits no longer than the spacing owed when the clock is set back", () => {
    const fake = new FakeClock();
    let offset = 0;
    const clock = {
      now: () => fake.now() + offset,
      setTimeout: (fn: () => void, ms: number) => fake.setTimeout(fn, ms),
      clearTimeout: (handle: unknown) => fake.clearTimeout(handle),
    };
    const h = appendLog({ clock });
    h.write("a");
    offset = -3_600_000;
    h.write("b");
    expect(fake.nextTimerAt).toBe(100);
    fake.advance(100);
    expect(h.delivered).toBe("ab");
  });

  it("refuses bad pacing options with a clear error", () => {
    const base = appendLog();
    const make = (o: Partial<AdaptivePublisherOptions<string>>) => () =>
      new AdaptivePublisher<string>({
        update: () => null,
        measure: () => 0,
        publish: () => {},
        onError: () => {},
        clock: base.clock,
        ...o,
      });
    expect(make({ minIntervalMs: -1 })).toThrow(
      /minIntervalMs must be a finite number >= 0, got -1/,
    );
    expect(make({ minIntervalMs: Number.NaN })).toThrow(/minIntervalMs/);
    expect(make({ targetBytesPerSecond: 0 })).toThrow(
      /targetBytesPerSecond must be a number > 0, got 0/,
    );
    expect(make({ minIntervalMs: 0, targetBytesPerSecond: 1 })).not.toThrow();
  });

  it("keeps pacing, delivers every byte once and ends idle for any write schedule", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            wait: fc.oneof(
              fc.constant(0),
              fc.integer({ min: 1, max: 30 }),
              fc.integer({ min: 31, max: 3000 }),
            ),
            size: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1000, max: 40_000 })),
            force: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
          }),
          { maxLength: 60 },
        ),
        (steps) => {
          const h = appendLog();
          const forcedAt = new Set<number>();
          for (const step of steps) {
            h.clock.advance(step.wait);
            h.write("z".repeat(step.size));
            if (step.force && h.publisher.flush(true)) forcedAt.add(h.events.length - 1);
          }
          h.clock.advance(1_000_000);
          expect(h.delivered).toBe(h.text);
          expect(h.clock.pendingTimers).toBe(0);
          const g = gaps(h.events);
          g.forEach((gap, i) => {
            if (forcedAt.has(i + 1)) return;
            const spacing = Math.max(100, (h.events[i]!.delta.length * 1000) / 102400);
            expect(gap).toBeGreaterThanOrEqual(spacing);
          });
        },
      ),
      { seed: 20261129, numRuns: 300 },
    );
  });

  it("never repeats or loses a delta when consumers throw at random", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            wait: fc.integer({ min: 0, max: 250 }),
            size: fc.integer({ min: 1, max: 5000 }),
            force: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
            fails: fc.boolean(),
          }),
          { maxLength: 40 },
        ),
        (steps) => {
          const attempts: string[] = [];
          let failNext = false;
          const h = appendLog({
            publish: (delta) => {
              attempts.push(delta);
              if (failNext) throw new Error("consumer failed");
            },
          });
          for (const step of steps) {
            h.clock.advance(step.wait);
            failNext = step.fails;
            h.write("w".repeat(step.size));
            if (step.force) h.publisher.flush(true);
          }
          failNext = false;
          h.publisher.flush(true);
          expect(attempts.join("")).toBe(h.text);
          expect(h.errors.every((e) => attempts.includes(e.delta!))).toBe(true);
          expect(h.clock.pendingTimers).toBe(0);
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });
});
