/**
 * Every error Chord throws. All are `TypeError`s (the input had the wrong shape), so a
 * caller can catch `TypeError`, `ChordError` or one precise class.
 *
 * @example
 * try { apply(state, ops) } catch (e) { if (e instanceof ChordError) resync() }
 */
export class ChordError extends TypeError {
  override name = "ChordError";
}

/** An op or wire op that is malformed: unknown verb, wrong arity, bad number, bad path. */
export class InvalidOpError extends ChordError {
  override name = "InvalidOpError";
}

/** A path segment that could reach an object's prototype: `__proto__`, `constructor`, `prototype`. */
export class UnsafePathError extends ChordError {
  override name = "UnsafePathError";
}

/** A value the tracker refuses because it is not plain JSON (Map, Date, cycle, BigInt, …). */
export class NotJsonError extends ChordError {
  override name = "NotJsonError";
}

/** A wire batch that does not fit this decoder's tables (unknown id, short form with no previous path). */
export class CodecError extends ChordError {
  override name = "CodecError";
}

/** An op that is well-formed but does not fit the target (missing key, index past the end, not a string). */
export class ApplyError extends ChordError {
  override name = "ApplyError";
}
