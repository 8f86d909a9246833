/**
 * The time source a publisher paces itself by. Injectable so tests (and runtimes with
 * their own notion of time) can drive it.
 */
export interface Clock {
  /** Milliseconds on any monotonic-enough scale; only differences are used. */
  now(): number;
  /** Run `fn` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancel a timer from `setTimeout`; unknown or already-fired handles are ignored. */
  clearTimeout(handle: unknown): void;
}

/**
 * The default clock: `Date.now()` and the global timers, present in browsers, Node and
 * Workers alike.
 * @example new AdaptivePublisher({ ...options, clock: systemClock })
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) =>
    globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
};
