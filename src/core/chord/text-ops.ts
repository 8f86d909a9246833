import { findOverlap } from "./overlap.ts";
import type { Op, Path } from "./types.ts";

/**
 * A private copy of `part`, a slice of the much longer `whole`. Engines keep slices as
 * views that pin their source: an `a` of 32 chars would otherwise keep the whole 50 KB
 * window alive for as long as anyone holds the op. Concatenating and re-slicing makes
 * the engine copy just the part.
 */
function detach(part: string, whole: string): string {
  return part.length * 4 < whole.length ? ` ${part}`.slice(1) : part;
}

/**
 * The ops that turn string `prev` at `path` into `next`: an append when `next` extends
 * `prev`; a trim plus an append when a suffix of `prev` starts `next`; a set otherwise.
 */
export function textOps(path: Path, prev: string, next: string, out: Op[]): void {
  if (prev === next) return;
  // `===` on a slice compares flat memory; startsWith walks code units (4-5x slower).
  if (next.length > prev.length && next.slice(0, prev.length) === prev) {
    out.push(["a", path, detach(next.slice(prev.length), next)]);
    return;
  }
  const overlap = findOverlap(prev, next);
  if (overlap === 0) {
    out.push(["s", path, next]);
    return;
  }
  out.push(["t", path, prev.length - overlap]);
  if (next.length > overlap) out.push(["a", path.slice(), detach(next.slice(overlap), next)]);
}
