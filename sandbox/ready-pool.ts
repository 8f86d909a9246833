/**
 * Up to `size` things made ahead of need (a sandbox's disk, its network namespace with
 * its bridge; decision 225), so a create takes one instead of waiting for it to be made.
 * `take` answers at once, with one or with null (the caller then makes its own); a
 * refill starts `refillDelayMs` after a take, so the work that took one (a sandbox's
 * first command) is not slowed by it, or at once after a take that left none. The pool
 * makes one at a time, so refilling never takes more than one of the host's cores from
 * the creates it serves.
 * A pool never gets anything back: what it hands out is new, never used before.
 */
export class ReadyPool<T> {
  readonly size: number;
  readonly #make: () => Promise<T>;
  readonly #discard: (item: T) => Promise<void>;
  readonly #ready: T[] = [];
  /** The refill loop while it runs. */
  #filling: Promise<void> | null = null;
  #closed = false;
  /** After a failed make the pool waits this long before it tries again. */
  readonly #retryMs: number;
  readonly #refillDelayMs: number;
  /** A refill waiting for its delay (after a take) or its retry (after a failed make). */
  #retry: NodeJS.Timeout | null = null;
  /** Why the last make failed (for /healthz and the log), or null. */
  lastError: string | null = null;

  /**
   * @example const disks = new ReadyPool(4, () => prepareDisk(next(), 1 << 30), discardDisk);
   */
  constructor(
    size: number,
    make: () => Promise<T>,
    discard: (item: T) => Promise<void>,
    { retryMs = 5_000, refillDelayMs = 0 }: { retryMs?: number; refillDelayMs?: number } = {},
  ) {
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new Error(`a pool's size must be a whole number from 0, got ${size}`);
    }
    this.size = size;
    this.#make = make;
    this.#discard = discard;
    this.#retryMs = retryMs;
    this.#refillDelayMs = refillDelayMs;
  }

  /** How many are ready now. */
  get ready(): number {
    return this.#ready.length;
  }

  /** Starts filling (in the background). */
  start(): void {
    this.#fill();
  }

  /** One that is ready, or null when none is; either way the pool refills behind it. */
  take(): T | null {
    const item = this.#ready.shift() ?? null;
    // A fill that runs goes on until the pool is full: nothing to start. With none left,
    // the next create would make its own, slower than any refill beside it: the refill
    // starts now. While some are left it waits its delay (decision 278).
    if (this.#ready.length === 0) this.#fillNow();
    else if (!this.#filling) this.#later(this.#refillDelayMs);
    return item;
  }

  /** Resolves once the pool holds `size` (or is closed, or a make failed). */
  async filled(): Promise<void> {
    // The caller is waiting for it.
    this.#fillNow();
    while (this.#filling) await this.#filling;
  }

  /** Fills now, a refill waiting for its delay included; one waiting after a failure keeps waiting. */
  #fillNow(): void {
    if (this.#retry && this.lastError === null) {
      clearTimeout(this.#retry);
      this.#retry = null;
    }
    this.#fill();
  }

  /** Stops refilling and discards everything still ready. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    await this.#filling;
    const left = this.#ready.splice(0);
    await Promise.all(left.map((item) => this.#discard(item).catch(() => {})));
  }

  /** Fills after `ms` (at once for 0), unless a fill is already waiting. */
  #later(ms: number): void {
    if (ms === 0) {
      this.#fill();
      return;
    }
    if (this.#retry || this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#fill();
    }, ms);
    this.#retry.unref();
  }

  #fill(): void {
    if (this.#filling || this.#retry || this.#closed || this.#ready.length >= this.size) return;
    this.#filling = this.#loop().finally(() => {
      this.#filling = null;
      // A take while the loop was ending.
      if (this.#ready.length < this.size && this.lastError === null) {
        this.#later(this.#refillDelayMs);
      }
    });
  }

  async #loop(): Promise<void> {
    while (!this.#closed && this.#ready.length < this.size) {
      let item: T;
      try {
        item = await this.#make();
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (why !== this.lastError) console.error(`sandbox host: could not make ahead: ${why}`);
        this.lastError = why;
        // Creates still work without the pool (they make their own); try again later.
        this.#later(this.#retryMs);
        return;
      }
      this.lastError = null;
      if (this.#closed) await this.#discard(item).catch(() => {});
      else this.#ready.push(item);
    }
  }
}
