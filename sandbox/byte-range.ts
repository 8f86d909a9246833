/**
 * One `Range: bytes=…` request header read against a file of `size` bytes (RFC 9110
 * §14.1.2). Only single ranges are served: a list of ranges is refused rather than
 * answered with the whole file, which for a spill file may be gigabytes.
 */

/** What to send: the whole file, bytes `start..end` (inclusive), or a 416. */
type ByteRange =
  | { kind: "whole" }
  | { kind: "part"; start: number; end: number }
  | { kind: "unsatisfiable" }
  | { kind: "multiple" };

const SINGLE = /^bytes=(\d*)-(\d*)$/;

/**
 * Reads `header` (absent, or not a byte range: the whole file, as the RFC allows).
 * @example byteRange("bytes=0-0", 10) // { kind: "part", start: 0, end: 0 }
 * @example byteRange("bytes=-4", 10) // { kind: "part", start: 6, end: 9 }
 * @example byteRange("bytes=10-", 10) // { kind: "unsatisfiable" }
 */
export function byteRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return { kind: "whole" };
  const value = header.replaceAll(" ", "");
  if (value.startsWith("bytes=") && value.includes(",")) return { kind: "multiple" };
  const match = SINGLE.exec(value);
  if (!match) return { kind: "whole" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "whole" };
  if (first === "") {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "part", start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  // "5-2" is not a valid range: the RFC says to ignore the header, not to refuse.
  if (last !== "" && Number(last) < start) return { kind: "whole" };
  if (start >= size) return { kind: "unsatisfiable" };
  const end = last === "" ? size - 1 : Number(last);
  return { kind: "part", start, end: Math.min(end, size - 1) };
}
