/**
 * The latest line of a text, for a progress message: what a person watching a long call
 * wants to read, without the text it came from.
 */

/** Longest latest line, in UTF-16 units, before it is cut with "…". */
export const LATEST_LINE_MAX = 120;

/**
 * The last non-empty line of the text, whitespace-trimmed and cut to `max` units.
 * @example latestLine("a\nbb\n\n") // "bb"
 */
export function latestLine(text: string, max: number = LATEST_LINE_MAX): string {
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1);
    const line = text.slice(start + 1, end).trim();
    if (line !== "") return line.length > max ? `${line.slice(0, max - 1)}…` : line;
    if (start < 0) break;
    end = start;
  }
  return "";
}
