import { describeOmitted, type Omitted, type OmittedUnit, unitNoun } from "./omitted.ts";

/** What a tool tells the model about a budget cut. */
interface RetentionNotice {
  omitted: Omitted;
  unit: OmittedUnit;
  /** What was kept, if worth saying: how many units, from which end of the output. */
  shown?: { count: number; from: "head" | "tail" };
}

/**
 * The notice as text, ending with the tool's own recovery words. Empty when nothing was
 * omitted (no notice, no advice).
 * @example
 * formatRetentionNotice(
 *   { omitted: Omitted.atLeast(1), unit: { one: "match", other: "matches" }, shown: { count: 100, from: "head" } },
 *   "Narrow the pattern or raise limit.",
 * ) // "Showing the first 100 matches. More matches were omitted. Narrow the pattern or raise limit."
 */
export function formatRetentionNotice(notice: RetentionNotice, recovery = ""): string {
  const omitted = describeOmitted(notice.omitted, notice.unit);
  if (omitted === "") return "";
  const parts: string[] = [];
  if (notice.shown) {
    const { count, from } = notice.shown;
    parts.push(
      `Showing the ${from === "head" ? "first" : "last"} ${count} ${unitNoun(notice.unit, count)}.`,
    );
  }
  parts.push(omitted);
  const advice = recovery.trim();
  if (advice !== "") parts.push(advice);
  return parts.join(" ");
}
