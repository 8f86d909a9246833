import type { Op, Path } from "../../src/core/chord/index.ts";

/**
 * Toolwire's first encoder (before docs/decisions/008), kept only to write batches in
 * the form the batch log already holds: a path's definition inside the path slot of the
 * op that uses it a second time, `["a", ["#", 0, ["text"]], "!"]`. Otherwise the
 * same compressions as today: ids 0, 1, 2… from each base, the path omitted when it
 * repeats the previous op's path in the batch.
 */
export function legacyEncoder(): { encode(ops: readonly Op[]): unknown[][] } {
  let ids = new Map<string, number>();
  let seen = new Set<string>();
  return {
    encode(ops) {
      if (ops[0]?.[0] === "r") {
        ids = new Map();
        seen = new Set();
      }
      const out: unknown[][] = [];
      let previous: string | null = null;
      for (const op of ops) {
        if (op[0] === "r") {
          out.push(["r", op[1]]);
          previous = null;
          continue;
        }
        if (op[0] === "m") throw new Error('The first wire form had no "m".');
        const path: Path = op[1];
        const key = JSON.stringify(path);
        const rest = op.slice(2);
        if (key === previous) {
          out.push([op[0], ...rest]);
          continue;
        }
        let slot: unknown = path;
        const id = ids.get(key);
        if (id !== undefined) slot = id;
        else if (seen.has(key)) {
          ids.set(key, ids.size);
          slot = ["#", ids.size - 1, path];
        } else seen.add(key);
        previous = key;
        out.push([op[0], slot, ...rest]);
      }
      return out;
    },
  };
}
