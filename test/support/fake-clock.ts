import type { Clock } from "../../src/core/publish/clock.ts";

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. Timers fire in due order, each with `now()`
 * set to its due time, so paced code can be tested without waiting.
 * @example
 * const clock = new FakeClock();
 * clock.setTimeout(() => console.log(clock.now()), 50);
 * clock.advance(100); // logs 50
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: FakeTimer[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.#nextId++;
    this.#timers.push({ id, at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** Number of timers scheduled and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Due time of the earliest pending timer, or `undefined` when none is pending. */
  get nextTimerAt(): number | undefined {
    let at: number | undefined;
    for (const t of this.#timers) if (at === undefined || t.at < at) at = t.at;
    return at;
  }

  /** Move time forward by `ms`, firing every timer that falls due on the way (including ones they schedule). */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}.`);
    this.advanceTo(this.#now + ms);
  }

  /** Move time forward to `time`, firing due timers in order. */
  advanceTo(time: number): void {
    if (!(time >= this.#now)) {
      throw new RangeError(`FakeClock.advanceTo: ${time} is before now (${this.#now}).`);
    }
    for (;;) {
      const due = this.#earliestDue(time);
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = due.at;
      due.fn();
    }
    this.#now = time;
  }

  #earliestDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers) {
      if (t.at <= limit && (!best || t.at < best.at || (t.at === best.at && t.id < best.id))) {
        best = t;
      }
    }
    return best;
  }
}
