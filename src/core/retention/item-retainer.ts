import { assertBudget } from "./budget.ts";
import { Omitted } from "./omitted.ts";

/**
 * `stopWhenFull`: the item after the cap is a probe that proves truncation and asks
 * the producer to stop. `readToEnd`: keep counting so the omitted count is exact.
 */
type ItemStop = "stopWhenFull" | "readToEnd";

interface ItemRetainerOptions {
  kind: "head";
  maxItems: number;
  stop: ItemStop;
}

/** What one `push` did. */
interface ItemPush {
  /** The item was kept. */
  kept: boolean;
  /** The budget has cut something so far. */
  truncated: boolean;
  /** The producer should stop feeding (only with `stopWhenFull`, from the probe on). */
  shouldStop: boolean;
}

interface ItemRetention<T> {
  items: T[];
  /** Cut by the budget (never "upstream incomplete"). */
  truncated: boolean;
  /** `exact` with `readToEnd`; `atLeast` with `stopWhenFull` (the producer stopped). */
  omitted: Omitted;
}

/**
 * Keeps the first `maxItems` items of a stream.
 * @example
 * const r = new ItemRetainer<string>({ kind: "head", maxItems: 2, stop: "stopWhenFull" });
 * r.push("a"); r.push("b"); r.push("c").shouldStop; // true: "c" was the probe
 * r.finish(); // { items: ["a", "b"], truncated: true, omitted: { kind: "atLeast", count: 1 } }
 */
export class ItemRetainer<T> {
  readonly maxItems: number;
  readonly stop: ItemStop;
  readonly #items: T[] = [];
  #beyond = 0;
  #result: ItemRetention<T> | undefined;

  constructor(options: ItemRetainerOptions) {
    if (options.kind !== "head") {
      throw new TypeError(
        `ItemRetainer: kind must be "head", got ${JSON.stringify(options.kind)}.`,
      );
    }
    if (options.stop !== "stopWhenFull" && options.stop !== "readToEnd") {
      throw new TypeError(
        `ItemRetainer: stop must be "stopWhenFull" or "readToEnd", got ${JSON.stringify(options.stop)}.`,
      );
    }
    this.maxItems = assertBudget("ItemRetainer", "maxItems", options.maxItems);
    this.stop = options.stop;
  }

  /** Items pushed so far, kept or not. */
  get seen(): number {
    return this.#items.length + this.#beyond;
  }

  /** Offer the next item. */
  push(item: T): ItemPush {
    if (this.#result) throw new Error("ItemRetainer: push() after finish().");
    if (this.#items.length < this.maxItems) {
      this.#items.push(item);
      return { kept: true, truncated: false, shouldStop: false };
    }
    this.#beyond++;
    return { kept: false, truncated: true, shouldStop: this.stop === "stopWhenFull" };
  }

  /** The kept items and what was omitted. Later calls return the same result. */
  finish(): ItemRetention<T> {
    if (!this.#result) {
      const truncated = this.#beyond > 0;
      let omitted = Omitted.none();
      if (truncated) {
        omitted =
          this.stop === "stopWhenFull"
            ? Omitted.atLeast(this.#beyond)
            : Omitted.exact(this.#beyond);
      }
      this.#result = { items: this.#items, truncated, omitted };
    }
    return this.#result;
  }
}
