/**
 * Writes that must land in the order they were made, whether or not their maker waits
 * for them: a Sandbox DO's lines in the sandbox directory (decision 275). A use writes
 * its line after its answer; an end that follows waits for it, so the later line is
 * never overtaken by the earlier one.
 */
export class InOrder {
  #last: Promise<void> = Promise.resolve();
  readonly #failed: (error: unknown) => void;

  /** `failed` is told of a write that threw; the writes after it still run. */
  constructor(failed: (error: unknown) => void) {
    this.#failed = failed;
  }

  /**
   * Runs `write` once every write before it has settled; the promise settles with it
   * (a caller that does not wait need not catch: `failed` is told).
   * @example await directory.run(() => stub.put(view));
   */
  run(write: () => Promise<void>): Promise<void> {
    const ran = this.#last.then(write);
    this.#last = ran.catch(this.#failed);
    return ran;
  }
}
