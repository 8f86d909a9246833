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
export type ReplaceOp = ["r", JsonValue];
/** Set the value at a non-empty path. */
export type SetOp = ["s", Path, JsonValue];
/** Delete the value at a non-empty path. */
export type DeleteOp = ["d", Path];
/** Append text to the string at `path`. */
export type AppendOp = ["a", Path, string];
/** Drop `n` UTF-16 code units from the start of the string at `path`. */
export type TrimOp = ["t", Path, number];
/** Array splice at `path` (may be the root `[]`). */
export type SpliceOp = ["p", Path, number, number, JsonValue[]];

export type Op = ReplaceOp | SetOp | DeleteOp | AppendOp | TrimOp | SpliceOp;
export type Verb = Op[0];

/**
 * A path on the wire: the full path, an interned id (a number), or omitted when it
 * repeats the previous op's path within the same batch.
 * `["#", id, path]` is the interning form, used on a path's second use.
 */
export type WirePath = Path | number | ["#", number, Path];

/** An encoded op: the same tuples, with paths compressed (see `encoder`). */
export type WireOp =
  | ["r", JsonValue]
  | ["s", WirePath, JsonValue]
  | ["s", JsonValue]
  | ["d", WirePath]
  | ["d"]
  | ["a", WirePath, string]
  | ["a", string]
  | ["t", WirePath, number]
  | ["t", number]
  | ["p", WirePath, number, number, JsonValue[]]
  | ["p", number, number, JsonValue[]];
