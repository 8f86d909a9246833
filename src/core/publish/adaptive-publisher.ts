import { type Clock, systemClock } from "./clock.ts";

/**
 * How an `AdaptivePublisher` reads, sizes and delivers changes.
 * `D` is one delta (e.g. Chord `Op[]`, a Shell update).
 */
export interface AdaptivePublisherOptions<D> {
  /**
   * Compute the delta since the last publication **and commit it as the new baseline**
   * (a Chord `tracker.flush()` does both). Return `null`/`undefined` when nothing changed.
   * The publisher calls it exactly once per publication and never re-delivers its result.
   */
  update(): D | null | undefined;
  /** Size of a delta in bytes as it will travel; drives the pacing. Must be >= 0. */
  measure(delta: D): number;
  /**
   * Deliver a delta. Called after `update()` committed the baseline, so a throw (or a
   * rejected promise) goes to `onError` and the delta is not sent again.
   */
  publish(delta: D): void | Promise<void>;
  /** Receives errors from `update`, `measure` and `publish`. Never silent. */
  onError(error: unknown, delta?: D): void;
  /** Least spacing between publications, in ms. Default 100. */
  minIntervalMs?: number;
  /** Byte rate sustained output converges to. Default 102400 (100 KiB/s). */
  targetBytesPerSecond?: number;
  /**
   * A least spacing that depends on the moment, read once per publication: how long
   * the next publication must wait for what this one cost beyond its bytes (a Durable
   * Object's fan-out: its subscribers × a time per send). Default none. A value that is
   * not a finite number >= 0 goes to `onError` and counts as 0.
   */
  floorMs?: () => number;
  /** Time source. Default `systemClock` (Date.now and the global timers). */
  clock?: Clock;
}

/**
 * Publishes a changing state as deltas, as soon as possible but no faster than the
 * pacing allows: after a publication of `bytes`, the next waits at least
 * `max(minIntervalMs, bytes * 1000 / targetBytesPerSecond, floorMs())` ms. The first change after
 * idle goes out at once; changes before the deadline collapse into one trailing
 * publication; no timer runs while nothing is pending.
 * @example
 * const pub = new AdaptivePublisher({
 *   update: () => { const ops = tracker.flush(); return ops.length ? ops : null; },
 *   measure: (ops) => JSON.stringify(ops).length,
 *   publish: (ops) => send(ops),
 *   onError: (e) => console.error(e),
 * });
 * sink.onChange = () => pub.markDirty();
 * // on completion: pub.flush(true); pub.dispose();
 */
export class AdaptivePublisher<D> {
  readonly #minIntervalMs: number;
  readonly #targetBytesPerSecond: number;
  readonly #options: AdaptivePublisherOptions<D>;
  readonly #clock: Clock;
  #dirty = false;
  #notBefore = Number.NEGATIVE_INFINITY;
  /** Spacing owed after the last publication, in ms. */
  #spacing = 0;
  #timer: unknown;
  #timerArmed = false;
  #publishing = false;
  #disposed = false;
  /** Until when the next change goes out at once, pacing or not (`expedite`). */
  #expeditedUntil = Number.NEGATIVE_INFINITY;

  constructor(options: AdaptivePublisherOptions<D>) {
    const minIntervalMs = options.minIntervalMs ?? 100;
    const target = options.targetBytesPerSecond ?? 102400;
    if (!(Number.isFinite(minIntervalMs) && minIntervalMs >= 0)) {
      throw new RangeError(
        `AdaptivePublisher: minIntervalMs must be a finite number >= 0, got ${String(minIntervalMs)}.`,
      );
    }
    if (!(target > 0)) {
      throw new RangeError(
        `AdaptivePublisher: targetBytesPerSecond must be a number > 0, got ${String(target)}.`,
      );
    }
    this.#minIntervalMs = minIntervalMs;
    this.#targetBytesPerSecond = target;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Note that the state changed. Publishes at once if pacing allows, otherwise makes
   * sure one trailing timer will publish the latest state at the deadline.
   */
  markDirty(): void {
    if (this.#disposed) return;
    this.#dirty = true;
    this.#schedule();
  }

  /**
   * Someone acted and waits to see the answer (a key typed into a terminal): the next
   * change noted within `windowMs` is published at once, not at the pacing deadline of
   * the last publication. One publication per call goes early, so a flood stays paced:
   * publications per second grow by at most the calls per second.
   */
  expedite(windowMs: number): void {
    if (this.#disposed) return;
    this.#expeditedUntil = this.#clock.now() + windowMs;
  }

  /**
   * Publish now. Without `force` this only happens if pacing allows (otherwise the
   * trailing timer stays in charge). With `force` pacing is bypassed once, the trailing
   * timer is cancelled and `update()` is consulted even if nothing was marked dirty:
   * use it on completion, error, abort, checkpoints and rebases.
   * Returns true when a delta was published.
   */
  flush(force = false): boolean {
    if (this.#disposed) return false;
    if (this.#publishing) {
      // Re-entrant (called from `publish`): leave it to the trailing timer.
      this.markDirty();
      return false;
    }
    if (!force && (!this.#dirty || this.#clock.now() < this.#notBefore)) return false;
    this.#cancelTimer();
    return this.#publishNow();
  }

  /** Stop for good: cancels the trailing timer; later calls do nothing. Does not publish. */
  dispose(): void {
    this.#disposed = true;
    this.#dirty = false;
    this.#cancelTimer();
  }

  #schedule(): void {
    if (this.#clock.now() < this.#expeditedUntil && !this.#publishing) {
      this.#cancelTimer();
      this.#publishNow();
      return;
    }
    if (this.#timerArmed) return;
    // Never wait longer than the spacing owed, even if the clock was set back meanwhile.
    const wait = Math.min(this.#notBefore - this.#clock.now(), this.#spacing);
    if (wait <= 0 && !this.#publishing) {
      this.#publishNow();
      return;
    }
    this.#timerArmed = true;
    this.#timer = this.#clock.setTimeout(() => this.#onTimer(), Math.max(0, wait));
  }

  #onTimer(): void {
    this.#timerArmed = false;
    this.#timer = undefined;
    if (this.#dirty && !this.#disposed) this.#publishNow();
  }

  #cancelTimer(): void {
    if (!this.#timerArmed) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timerArmed = false;
    this.#timer = undefined;
  }

  /** The caller's spacing floor for this publication, in ms (0 when none or unusable). */
  #floor(delta: D): number {
    const { floorMs, onError } = this.#options;
    if (!floorMs) return 0;
    try {
      const floor = floorMs();
      if (Number.isFinite(floor) && floor >= 0) return floor;
      throw new RangeError(
        `AdaptivePublisher: floorMs() must return a finite number >= 0, got ${String(floor)}; no floor used.`,
      );
    } catch (error) {
      onError(error, delta);
      return 0;
    }
  }

  /** One publication: read and commit the delta, set the next deadline, then deliver. */
  #publishNow(): boolean {
    const { update, measure, publish, onError } = this.#options;
    this.#dirty = false;
    let delta: D | null | undefined;
    try {
      delta = update();
    } catch (error) {
      onError(error);
      return false;
    }
    if (delta === null || delta === undefined) return false;
    // Spent only by a publication: an expedite outlives a look that found nothing.
    this.#expeditedUntil = Number.NEGATIVE_INFINITY;
    let bytes = 0;
    try {
      bytes = measure(delta);
      if (!(Number.isFinite(bytes) && bytes >= 0)) {
        throw new RangeError(
          `AdaptivePublisher: measure() must return a finite number >= 0, got ${String(bytes)}; paced as 0 bytes.`,
        );
      }
    } catch (error) {
      bytes = 0;
      onError(error, delta);
    }
    this.#spacing = Math.max(
      this.#minIntervalMs,
      (bytes * 1000) / this.#targetBytesPerSecond,
      this.#floor(delta),
    );
    this.#notBefore = this.#clock.now() + this.#spacing;
    this.#publishing = true;
    try {
      const result = publish(delta);
      if (result instanceof Promise) result.catch((error: unknown) => onError(error, delta));
    } catch (error) {
      onError(error, delta);
    } finally {
      this.#publishing = false;
    }
    if (this.#dirty && !this.#disposed) this.#schedule();
    return true;
  }
}
