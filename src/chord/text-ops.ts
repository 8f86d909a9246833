import { findOverlap } from "./overlap.ts";
import type { Op, Path } from "./types.ts";

/**
 * The ops that turn string `prev` at `path` into `next`: an append when `next` extends
 * `prev`; a trim plus an append when a suffix of `prev` starts `next`; a set otherwise.
 */
export function textOps(path: Path, prev: string, next: string, out: Op[]): void {
  if (prev === next) return;
  if (next.length > prev.length && next.slice(0, prev.length) === prev) {
    out.push(["a", path, next.slice(prev.length)]);
    return;
  }
  const overlap = findOverlap(prev, next);
  if (overlap === 0) {
    out.push(["s", path, next]);
    return;
  }
  out.push(["t", path, prev.length - overlap]);
  if (next.length > overlap) out.push(["a", path.slice(), next.slice(overlap)]);
}
