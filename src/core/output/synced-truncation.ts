/**
 * `SyncedTruncation`: the truncation last written into a sink's tracked state, kept field
 * by field so that a new one (a source's totals at every update, or the window's at a
 * flush) is checked and written as only the fields that moved. See docs/decisions/016.
 */

import type { Tracker } from "../chord/index.ts";
import { TRUNCATION_KEYS, truncationFieldError, truncationShapeError } from "./limits.ts";
import type { ToolOutputState, Truncation } from "./types.ts";

const SPILL_PATH = TRUNCATION_KEYS.indexOf("spillPath");

/** The tracked path of each field, by index in `TRUNCATION_KEYS` (never mutated). */
const FIELD_PATHS: readonly (readonly ["truncation", string])[] = TRUNCATION_KEYS.map(
  (key) => ["truncation", key] as const,
);

/**
 * Holds a valid `Truncation` as values in `TRUNCATION_KEYS` order. `stage(t)` checks `t`
 * against it: a field equal to the held one is valid already (what is held was checked),
 * so only the fields that differ are validated, each read once; `commit(target)` then
 * writes exactly those into `target` and holds them. Nothing is allocated per update.
 *
 * @example
 * const synced = new SyncedTruncation(state.truncation);
 * if (synced.stage(update.metadata, "capture(meta)") > 0) synced.commit(tracker);
 */
export class SyncedTruncation {
  /** The held fields, by index in `TRUNCATION_KEYS` (`undefined` for an absent `spillPath`). */
  readonly #values: unknown[] = new Array<unknown>(TRUNCATION_KEYS.length);
  /** Indexes of the fields the last `stage` found different, and their new values. */
  readonly #staged: number[] = [];
  readonly #incoming: unknown[] = [];

  constructor(t: Truncation) {
    this.reset(t);
  }

  /** Holds `t` (already checked) as it is; drops anything staged. */
  reset(t: Truncation): void {
    for (let i = 0; i < TRUNCATION_KEYS.length; i++) {
      this.#values[i] = t[TRUNCATION_KEYS[i] as keyof Truncation];
    }
    this.#staged.length = 0;
    this.#incoming.length = 0;
  }

  /**
   * Checks `t` as a `Truncation` named `what` and stages the fields that differ from the
   * held ones; returns how many. Throws the `TypeError` `truncationError` would (the first
   * bad field in key order) and stages nothing.
   */
  stage(t: unknown, what: string): number {
    this.#staged.length = 0;
    this.#incoming.length = 0;
    if (t === null || typeof t !== "object") throw truncationShapeError(what);
    const r = t as Record<string, unknown>;
    for (let i = 0; i < TRUNCATION_KEYS.length; i++) {
      const key = TRUNCATION_KEYS[i] as keyof Truncation;
      // Read once: a getter must not pass the check with one value and commit another.
      const v = r[key];
      if (v === this.#values[i]) continue;
      const error = truncationFieldError(key, v, what);
      if (error) {
        this.#staged.length = 0;
        this.#incoming.length = 0;
        throw error;
      }
      this.#staged.push(i);
      this.#incoming.push(v);
    }
    return this.#staged.length;
  }

  /**
   * Writes the staged fields into the tracked `truncation` (an absent `spillPath` as
   * `undefined`, which the tracker takes as a delete) and holds them.
   */
  commit(tracker: Tracker<ToolOutputState>): void {
    for (let j = 0; j < this.#staged.length; j++) {
      const i = this.#staged[j] as number;
      const v = this.#incoming[j];
      this.#values[i] = v;
      tracker.set(FIELD_PATHS[i] as ["truncation", string], v);
    }
    this.#staged.length = 0;
    this.#incoming.length = 0;
  }

  /** The held spill path, if any. */
  get spillPath(): string | undefined {
    return this.#values[SPILL_PATH] as string | undefined;
  }

  /** A fresh copy of the held truncation (an absent `spillPath` left absent). */
  toTruncation(): Truncation {
    const copy: Record<string, unknown> = {};
    for (let i = 0; i < TRUNCATION_KEYS.length; i++) {
      const v = this.#values[i];
      if (v !== undefined) copy[TRUNCATION_KEYS[i] as string] = v;
    }
    return copy as unknown as Truncation;
  }
}
