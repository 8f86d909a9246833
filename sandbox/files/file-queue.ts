/**
 * Changes to one file, one at a time: `write` and `edit` of the same real path run in
 * the order they arrived, so an edit reads the file the previous change left and no
 * change is lost; different files change in parallel.
 * @example const queue = new FileQueue(); await queue.run("/abs/ws/a.txt", () => edit());
 */
export class FileQueue {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `change` after every earlier change of `key` has settled. */
  async run<T>(key: string, change: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    this.#tails.set(key, tail);
    await before;
    try {
      return await change();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Files with a change running or waiting (for tests: the map empties). */
  get size(): number {
    return this.#tails.size;
  }
}
