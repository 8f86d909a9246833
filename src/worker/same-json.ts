/**
 * Structural equality of JSON values, independent of object key order.
 * @example sameJson({ a: 1, b: [2] }, { b: [2], a: 1 }) // true
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const rb = b as Record<string, unknown>;
  return ka.every(
    (k) => Object.hasOwn(rb, k) && sameJson((a as Record<string, unknown>)[k], rb[k]),
  );
}
