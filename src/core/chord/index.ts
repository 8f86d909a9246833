export { apply } from "./apply.ts";
export { type Decoder, decoder, encoder } from "./codec.ts";
export {
  ApplyError,
  ChordError,
  CodecError,
  InvalidOpError,
  NotJsonError,
  UnsafePathError,
} from "./errors.ts";
export { fitsDepth, MAX_JSON_DEPTH } from "./json.ts";
export { upgradeLegacyWire } from "./legacy-wire.ts";
export { findOverlap } from "./overlap.ts";
export { type Tracker, track } from "./tracker.ts";
export type * from "./types.ts";
export { assertValidOp, assertValidWireOp, isBase } from "./validate.ts";
