import type { WireOp } from "./types.ts";

/** The first form's path-carrying verbs (it had no "m"), with their length when the path is there. */
const LEGACY_ARITY: Readonly<Record<string, number>> = { s: 3, d: 2, a: 3, t: 3, p: 5 };

/**
 * The op written in Toolwire's first wire form with a path definition inside its path
 * slot, `["a", ["#", 0, ["text"]], "!"]`, split into the current (reference) form:
 * `["#", 0, ["text"]]` then `["a", 0, "!"]`. Null for any other value.
 */
function splitLegacy(w: unknown): [WireOp, WireOp] | null {
  if (!Array.isArray(w) || typeof w[0] !== "string" || w.length !== LEGACY_ARITY[w[0]]) return null;
  const slot: unknown = w[1];
  if (!Array.isArray(slot) || slot.length !== 3 || slot[0] !== "#" || !Array.isArray(slot[2])) {
    return null;
  }
  const op = w.slice();
  op[1] = slot[1];
  return [slot as WireOp, op as WireOp];
}

/**
 * Reads a batch stored before the wire became the reference Chord's (docs/decisions/008):
 * then a path's definition sat in the path slot of the op that used it a second time;
 * now it is a wire op of its own just before that op. Both forms number ids the same
 * way (0, 1, 2… from each base), so the rewrite is op by op, with no state.
 *
 * Detection is unambiguous: a path segment is a string or a number, never an array, so
 * no current-form op has `["#", id, [...]]` in its path slot; and the old form had no
 * `"#"` op. A current-form batch comes back equal. What comes back is still untrusted:
 * run it through `decoder()` as any wire batch.
 *
 * @example
 * upgradeLegacyWire([["a", ["#", 0, ["text"]], "!"]]); // [["#", 0, ["text"]], ["a", 0, "!"]]
 * upgradeLegacyWire([["a", 0, "?"]]);                 // [["a", 0, "?"]]
 */
export function upgradeLegacyWire(wire: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const w of wire) {
    const split = splitLegacy(w);
    if (split === null) out.push(w);
    else out.push(split[0], split[1]);
  }
  return out;
}
