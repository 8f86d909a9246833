// The pool behind what a host makes ahead (decision 225), with plain functions as its
// parts: it fills to its size and never past it, hands each thing out once, refills
// after a take, goes on after a failed make, and discards what it holds when closed.
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_COMMAND_LIMITS } from "../../../sandbox/jail/limits.ts";
import { ReadyPool } from "../../../sandbox/ready-pool.ts";
import { sandboxesConfigFromEnv } from "../../../sandbox/sandboxes/config.ts";

function counter() {
  let made = 0;
  let making = 0;
  let mostAtOnce = 0;
  const discarded: number[] = [];
  return {
    discarded,
    get made() {
      return made;
    },
    get mostAtOnce() {
      return mostAtOnce;
    },
    async make(): Promise<number> {
      making++;
      mostAtOnce = Math.max(mostAtOnce, making);
      await new Promise((resolve) => setImmediate(resolve));
      making--;
      return ++made;
    },
    async discard(item: number): Promise<void> {
      discarded.push(item);
    },
  };
}

/** A filled pool of 2 whose refill after a take waits 60 s. */
async function filledWithLongDelay() {
  const parts = counter();
  const pool = new ReadyPool(
    2,
    () => parts.make(),
    (n) => parts.discard(n),
    { refillDelayMs: 60_000 },
  );
  pool.start();
  await pool.filled();
  return { parts, pool };
}

describe("ReadyPool", () => {
  it("fills to its size, one make at a time, and never past it", async () => {
    const parts = counter();
    const pool = new ReadyPool(
      3,
      () => parts.make(),
      (n) => parts.discard(n),
    );
    pool.start();
    await pool.filled();
    await pool.filled();
    expect(pool.ready).toBe(3);
    expect(parts.made).toBe(3);
    expect(parts.mostAtOnce).toBe(1);
    await pool.close();
  });

  it("hands each thing out once, refills behind a take, and answers null when empty", async () => {
    const parts = counter();
    const pool = new ReadyPool(
      2,
      () => parts.make(),
      (n) => parts.discard(n),
    );
    pool.start();
    await pool.filled();
    const taken = [pool.take(), pool.take(), pool.take()];
    expect(taken).toEqual([1, 2, null]);
    await pool.filled();
    expect(pool.ready).toBe(2);
    expect([pool.take(), pool.take()]).toEqual([3, 4]);
    await pool.close();
  });

  it("with a refill delay, a take that leaves some waits it; filled() starts the waiting refill at once", async () => {
    const { parts, pool } = await filledWithLongDelay();
    expect(pool.take()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(parts.made).toBe(2);
    expect(pool.ready).toBe(1);
    await pool.filled();
    expect(pool.ready).toBe(2);
    await pool.close();
  });

  it("a take that leaves none refills at once, without waiting the delay", async () => {
    const { parts, pool } = await filledWithLongDelay();
    expect(pool.take()).toBe(1);
    // The second take empties it: the refill waiting its 60 s starts now.
    expect(pool.take()).toBe(2);
    await vi.waitFor(() => expect(pool.ready).toBe(2), { timeout: 5_000 });
    expect(parts.made).toBe(4);
    expect(parts.mostAtOnce).toBe(1);
    await pool.close();
  });

  it("a failed make is reported and tried again; takes meanwhile answer null", async () => {
    let fail = true;
    const parts = counter();
    const errors: unknown[] = [];
    const log = console.error;
    console.error = (...args: unknown[]) => errors.push(args.join(" "));
    try {
      const pool = new ReadyPool(
        1,
        async () => {
          if (fail) throw new Error("no loop device");
          return parts.make();
        },
        (n) => parts.discard(n),
        { retryMs: 10 },
      );
      pool.start();
      await pool.filled();
      expect(pool.lastError).toBe("no loop device");
      expect(pool.take()).toBeNull();
      fail = false;
      while (pool.ready === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(pool.lastError).toBeNull();
      expect(pool.take()).toBe(1);
      expect(errors).toHaveLength(1);
      await pool.close();
    } finally {
      console.error = log;
    }
  });

  it("close discards what is ready and makes nothing more", async () => {
    const parts = counter();
    const pool = new ReadyPool(
      2,
      () => parts.make(),
      (n) => parts.discard(n),
    );
    pool.start();
    await pool.filled();
    await pool.close();
    expect(parts.discarded.sort()).toEqual([1, 2]);
    expect(pool.take()).toBeNull();
    await pool.filled();
    expect(parts.made).toBe(2);
  });

  it("a size that is not a whole number from 0 is refused", () => {
    expect(
      () =>
        new ReadyPool(
          -1,
          async () => 1,
          async () => {},
        ),
    ).toThrow(/whole number from 0/);
    expect(
      () =>
        new ReadyPool(
          1.5,
          async () => 1,
          async () => {},
        ),
    ).toThrow(/whole number from 0/);
  });
});

describe("SANDBOX_POOL_SIZE", () => {
  const config = (value?: string) =>
    sandboxesConfigFromEnv(
      value === undefined ? {} : { SANDBOX_POOL_SIZE: value },
      "/srv/workspace",
      DEFAULT_COMMAND_LIMITS,
    );

  it("is 4 by default, and 0 turns making ahead off", () => {
    expect(config().poolSize).toBe(4);
    expect(config("0").poolSize).toBe(0);
    expect(config("16").poolSize).toBe(16);
  });

  it("anything but a whole number from 0 stops the host at start, naming the setting", () => {
    for (const bad of ["-1", "two", "1.5"]) {
      expect(() => config(bad)).toThrow(
        `SANDBOX_POOL_SIZE must be a whole number from 0, got '${bad}'`,
      );
    }
  });
});
