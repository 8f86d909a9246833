/** Only the last this many UTF-16 code units of `prev` are searched. */
export const OVERLAP_WINDOW = 65_536;
/** The long probe: the first this many code units of `next`. */
export const LONG_HEAD = 64;
/** At most this many hits are verified per probe. */
export const MAX_CANDIDATES = 8;

/** Counts the candidates verified, for tests that check the probe stays bounded. */
export interface OverlapProbe {
  candidates: number;
}

/**
 * Length of the longest suffix of `prev` that is also a prefix of `next` that the native
 * probe can verify, or 0 when there is none. Finds how a rolling window moved:
 * `findOverlap("abcdefgh", "defghxyz") === 5`, so the change is "drop 3, append xyz".
 *
 * The probe (docs/decisions/001): `indexOf` of the first 64 code units of `next` in
 * `prev`; then `lastIndexOf` of the last 64 code units of `prev` in `next` (periodic
 * text such as a run of dots defeats the first); then `indexOf` of the first code unit
 * of `next` for overlaps shorter than 64. At most 8 hits per probe, every hit verified
 * with an exact comparison, only the last 65,536 code units of `prev` considered.
 * Work is bounded whatever the input; a pathological string can make it miss the
 * longest overlap (it then returns a shorter verified one, or 0).
 *
 * @example
 * const k = findOverlap(prev, next);
 * if (k > 0) ops.push(["t", path, prev.length - k], ["a", path, next.slice(k)]);
 */
export function findOverlap(prev: string, next: string, probe?: OverlapProbe): number {
  const maxOverlap = Math.min(next.length, prev.length, OVERLAP_WINDOW);
  if (maxOverlap === 0) return 0;
  const head = Math.min(LONG_HEAD, maxOverlap);
  // Overlaps of `head` code units or more: the hit must start where the overlap starts.
  const scan: Scan = { prev, next, probe };
  const long = scanPrev(scan, next.slice(0, head), prev.length - maxOverlap);
  if (long > 0 || head === 1) return long;
  if (head === LONG_HEAD) {
    const fromEnd = scanNext(scan, prev.slice(-LONG_HEAD), maxOverlap - LONG_HEAD);
    if (fromEnd > 0) return fromEnd;
  }
  // Shorter overlaps start in the last `head - 1` code units of `prev`.
  return scanPrev(scan, next.charAt(0), prev.length - head + 1);
}

/** The two texts a probe compares, and the counter of candidates it verified. */
interface Scan {
  prev: string;
  next: string;
  probe: OverlapProbe | undefined;
}

/** Hits of `needle` (a head of `next`) in `prev`, leftmost (longest overlap) first. */
function scanPrev({ prev, next, probe }: Scan, needle: string, from: number): number {
  let at = from;
  for (let n = 0; n < MAX_CANDIDATES; n++) {
    const hit = prev.indexOf(needle, at);
    if (hit < 0) return 0;
    if (probe) probe.candidates++;
    const tail = prev.slice(hit);
    // `===` on slices compares flat memory; startsWith walks code units (4-5x slower).
    if (next.slice(0, tail.length) === tail) return tail.length;
    at = hit + 1;
  }
  return 0;
}

/** Hits of `needle` (the tail of `prev`) in `next`, rightmost (longest overlap) first. */
function scanNext({ prev, next, probe }: Scan, needle: string, from: number): number {
  let at = from;
  for (let n = 0; n < MAX_CANDIDATES && at >= 0; n++) {
    const hit = next.lastIndexOf(needle, at);
    if (hit < 0) return 0;
    if (probe) probe.candidates++;
    const overlap = hit + needle.length;
    if (prev.slice(prev.length - overlap) === next.slice(0, overlap)) return overlap;
    at = hit - 1;
  }
  return 0;
}
