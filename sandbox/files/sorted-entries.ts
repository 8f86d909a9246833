/**
 * A directory's entries in order, with memory bounded by a window rather than by the
 * directory (issue 30: one directory of a million names must not be read into memory at
 * once). A pass reads the directory and keeps only the `window` smallest entries after
 * the last one given, in a max-heap; a directory that fits the window (nearly all) takes
 * one pass, a larger one a pass per window. A directory that changes between passes is
 * listed as each pass found it.
 */
import type { Dirent } from "node:fs";
import { opendir } from "node:fs/promises";

/** A total order on entries: two different names never compare equal. */
type EntryOrder = (a: Dirent, b: Dirent) => number;

/** Entries one pass keeps at most (about 200 bytes each with its name). */
export const ENTRY_WINDOW = 65_536;

/**
 * One pass: the `window` smallest entries of `dir` that come after `after` (all, when
 * null), sorted, and how many entries the directory holds in all.
 * @example const { entries, total } = await smallestEntries("/proc/self/fd/7", byName, null, 500);
 */
export async function smallestEntries(
  dir: string,
  order: EntryOrder,
  after: Dirent | null,
  window: number,
): Promise<{ entries: Dirent[]; total: number }> {
  const heap = new MaxHeap(order);
  let total = 0;
  for await (const entry of await opendir(dir)) {
    total++;
    if (after && order(entry, after) <= 0) continue;
    if (heap.size < window) heap.push(entry);
    else if (window > 0 && order(entry, heap.top()) < 0) heap.replaceTop(entry);
  }
  return { entries: heap.drain().sort(order), total };
}

/** Byte order of the names: the order ripgrep and the walker list in. */
export const byName: EntryOrder = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A binary max-heap under `order`: the largest kept entry is the one a smaller one replaces. */
class MaxHeap {
  readonly #items: Dirent[] = [];
  readonly #order: EntryOrder;

  constructor(order: EntryOrder) {
    this.#order = order;
  }

  get size(): number {
    return this.#items.length;
  }

  top(): Dirent {
    return this.#items[0]!;
  }

  push(entry: Dirent): void {
    const items = this.#items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.#order(items[i]!, items[parent]!) <= 0) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  replaceTop(entry: Dirent): void {
    const items = this.#items;
    items[0] = entry;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < items.length && this.#order(items[left]!, items[largest]!) > 0) largest = left;
      if (right < items.length && this.#order(items[right]!, items[largest]!) > 0) largest = right;
      if (largest === i) return;
      [items[i], items[largest]] = [items[largest]!, items[i]!];
      i = largest;
    }
  }

  drain(): Dirent[] {
    return this.#items.splice(0);
  }
}
