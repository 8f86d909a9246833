/**
 * How much a budget left out: nothing, an exact count, a lower bound (the reader
 * stopped early, so more may exist), or an unknown amount.
 */
export type Omitted =
  | { kind: "none" }
  | { kind: "exact"; count: number }
  | { kind: "atLeast"; count: number }
  | { kind: "unknown" };

/**
 * Constructors for `Omitted`.
 * @example Omitted.exact(25) // { kind: "exact", count: 25 }
 */
export const Omitted = {
  none: (): Omitted => ({ kind: "none" }),
  exact: (count: number): Omitted => ({ kind: "exact", count: checkCount("exact", count) }),
  atLeast: (count: number): Omitted => ({ kind: "atLeast", count: checkCount("atLeast", count) }),
  unknown: (): Omitted => ({ kind: "unknown" }),
};

function checkCount(kind: string, count: number): number {
  if (Number.isSafeInteger(count) && count >= 0) return count;
  throw new RangeError(`Omitted.${kind}: count must be a non-negative integer, got ${count}.`);
}

/** A counted noun. A bare string is the singular and takes a plain "s" in the plural. */
export type OmittedUnit = string | { one: string; other: string };

/** The noun for `count` of `unit`. */
export function unitNoun(unit: OmittedUnit, count: number): string {
  if (typeof unit === "string") return count === 1 ? unit : `${unit}s`;
  return count === 1 ? unit.one : unit.other;
}

/**
 * One sentence about what was omitted. Only an exact count prints a number; a lower
 * bound never claims one. Nothing omitted gives "".
 * @example describeOmitted(Omitted.exact(25), "item") // "Omitted 25 items."
 * @example describeOmitted(Omitted.atLeast(1), { one: "match", other: "matches" }) // "More matches were omitted."
 */
export function describeOmitted(omitted: Omitted, unit: OmittedUnit): string {
  switch (omitted.kind) {
    case "none":
      return "";
    case "exact":
      return omitted.count === 0
        ? ""
        : `Omitted ${omitted.count} ${unitNoun(unit, omitted.count)}.`;
    case "atLeast":
      return `More ${unitNoun(unit, 2)} were omitted.`;
    case "unknown":
      return `Some ${unitNoun(unit, 2)} may have been omitted.`;
  }
}
