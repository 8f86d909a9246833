/**
 * Callers waiting, each at most a given time, for one moment (an invocation settling).
 * @example
 * await waits.wait(10_000); // resolves when woken or after 10 s
 * waits.wakeAll();
 */
export class WaitList {
  readonly #waiters = new Set<() => void>();

  /**
   * Resolves at `wakeAll` or after `ms` (cut to `longest`), whichever comes first; at once
   * for a wait of zero, a negative or a non-finite one.
   */
  wait(ms: number, longest = Number.POSITIVE_INFINITY): Promise<void> {
    const wait = Math.min(Number.isFinite(ms) ? Math.max(0, ms) : 0, longest);
    if (wait === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.#waiters.add(done);
    });
  }

  /** Wakes every waiter. */
  wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
