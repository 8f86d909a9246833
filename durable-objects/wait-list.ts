/**
 * Callers waiting, each at most a given time, for one moment (an invocation settling).
 * @example
 * await waits.wait(10_000); // resolves when woken or after 10 s
 * waits.wakeAll();
 */
export class WaitList {
  readonly #waiters = new Set<() => void>();

  /** Resolves at `wakeAll` or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
    });
  }

  /** Wakes every waiter. */
  wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
