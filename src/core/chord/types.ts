/** Any JSON value. Only these are accepted by the tracker, the codec and `apply`. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** One step of a path: an object key or an array index. */
export type Seg = string | number;
export type Path = Seg[];

/** Replace the whole value. Only ever at index 0 of a batch. */
type ReplaceOp = ["r", JsonValue];
/** Set the value at a non-empty path. */
type SetOp = ["s", Path, JsonValue];
/** Delete the value at a non-empty path. */
type DeleteOp = ["d", Path];
/** Append text to the string at `path`. */
type AppendOp = ["a", Path, string];
/** Drop `n` UTF-16 code units from the start of the string at `path`. */
type TrimOp = ["t", Path, number];
/** Array splice at `path` (may be the root `[]`). */
type SpliceOp = ["p", Path, number, number, JsonValue[]];
/**
 * Reorder the array at `path` (may be the root `[]`) in place:
 * `new[i] = old[permutation[i]]`, where `permutation` is a permutation of `0..n-1`
 * and `n` is the array's length.
 */
type ReorderOp = ["m", Path, number[]];

export type Op = ReplaceOp | SetOp | DeleteOp | AppendOp | TrimOp | SpliceOp | ReorderOp;

/** A path on the wire: the full path, or the id a `DefineOp` gave it on this stream. */
export type WirePath = Path | number;

/**
 * Gives `path` the number `id` on this stream, until the next base batch. Sent on a
 * path's second use, as a wire op of its own just before the op that uses the number;
 * ids count up from 0 after each base.
 */
type DefineOp = ["#", number, Path];

/**
 * An encoded op: the same tuples with paths compressed (see `encoder`), plus `DefineOp`.
 * Each path-carrying tuple has a short form without its path, meaning "the path of the
 * previous op in this batch"; arity tells the forms apart.
 */
export type WireOp =
  | ["r", JsonValue]
  | DefineOp
  | ["s", WirePath, JsonValue]
  | ["s", JsonValue]
  | ["d", WirePath]
  | ["d"]
  | ["a", WirePath, string]
  | ["a", string]
  | ["t", WirePath, number]
  | ["t", number]
  | ["p", WirePath, number, number, JsonValue[]]
  | ["p", number, number, JsonValue[]]
  | ["m", WirePath, number[]]
  | ["m", number[]];
