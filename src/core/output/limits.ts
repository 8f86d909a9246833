/**
 * The sink's bounds (docs/design.md#sink-bounds) and the checks that enforce them. Every check
 * throws before anything changes, with what was wrong, the limit, and what to do.
 */
import { utf8ByteLength } from "../retention/utf8.ts";
import type { ImageContent, Truncation, Usage } from "./types.ts";

/** At most this many images per result. */
export const MAX_IMAGES = 8;
/** At most this many base64 characters per image (1 MiB). */
export const MAX_IMAGE_BASE64 = 1_048_576;
/** `details` serialized as JSON may be at most this many UTF-8 bytes (64 KiB). */
export const MAX_DETAILS_BYTES = 65_536;
/** An error or notice appended by the sink is cut to this many UTF-8 bytes. */
export const MAX_NOTICE_BYTES = 4_096;

/** A sink bound was exceeded. `limit` and `size` are in the unit the message names. */
export class OutputLimitError extends RangeError {
  readonly limit: number;
  readonly size: number;
  constructor(message: string, limit: number, size: number) {
    super(message);
    this.name = "OutputLimitError";
    this.limit = limit;
    this.size = size;
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const IMAGE_MIME = /^image\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;

/** Throws unless `img` is `{ data: base64 ≤ 1 MiB, mimeType: "image/…" }` and fits in the count. */
export function assertImage(img: unknown, imagesSoFar: number): asserts img is ImageContent {
  if (img === null || typeof img !== "object") {
    throw new TypeError("image() takes { data: <base64 string>, mimeType: <image/...> }.");
  }
  const { data, mimeType } = img as { data?: unknown; mimeType?: unknown };
  if (typeof mimeType !== "string" || !IMAGE_MIME.test(mimeType)) {
    throw new TypeError(
      `image mimeType must be an image type such as "image/png", got ${JSON.stringify(mimeType)}.`,
    );
  }
  if (typeof data !== "string") {
    throw new TypeError("image data must be a base64 string.");
  }
  if (imagesSoFar >= MAX_IMAGES) {
    throw new OutputLimitError(
      `A result holds at most ${MAX_IMAGES} images; this would be image ${imagesSoFar + 1}. Combine or drop images.`,
      MAX_IMAGES,
      imagesSoFar + 1,
    );
  }
  if (data.length > MAX_IMAGE_BASE64) {
    throw new OutputLimitError(
      `An image may hold at most ${MAX_IMAGE_BASE64} base64 characters (1 MiB); got ${data.length}. Scale it down or compress it.`,
      MAX_IMAGE_BASE64,
      data.length,
    );
  }
  if (!BASE64.test(data)) {
    throw new TypeError("image data must be base64 (A-Z, a-z, 0-9, +, / and = padding).");
  }
}

/** Throws unless `u` is an object whose fields are non-negative finite numbers (or undefined). */
export function assertUsage(u: unknown): asserts u is Usage {
  if (u === null || typeof u !== "object" || Array.isArray(u)) {
    throw new TypeError("usage() takes an object of non-negative numbers, e.g. { input: 120 }.");
  }
  for (const [field, value] of Object.entries(u)) {
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new RangeError(
        `usage.${field} must be a non-negative finite number, got ${String(value)}.`,
      );
    }
  }
}

/** Throws unless `names` is an array of non-empty strings. */
export function assertToolNames(names: unknown): asserts names is string[] {
  if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || n === "")) {
    throw new TypeError("addTools() takes an array of non-empty tool names.");
  }
}

/**
 * The error for `details` serialized as `json` when it is over 64 KiB, else null. `advice`
 * ends the message (what happened to the value, what to do).
 * @example detailsSizeError(JSON.stringify(details), "Keep large data in the text.") // null
 */
export function detailsSizeError(json: string, advice: string): OutputLimitError | null {
  const bytes = utf8ByteLength(json);
  if (bytes <= MAX_DETAILS_BYTES) return null;
  return new OutputLimitError(
    `details is ${bytes} bytes serialized; the limit is ${MAX_DETAILS_BYTES} bytes (64 KiB). ${advice}`,
    MAX_DETAILS_BYTES,
    bytes,
  );
}

/** What each `Truncation` field holds. */
type TruncationField = "flag" | "cut" | "count" | "path";

/**
 * Every field of `Truncation` and what it holds: the one list the checks, the copies and
 * the sink's field-by-field sync read (`satisfies` makes a missing field a type error).
 */
const TRUNCATION_FIELDS = {
  truncated: "flag",
  truncatedBy: "cut",
  totalLines: "count",
  totalBytes: "count",
  outputLines: "count",
  outputBytes: "count",
  maxLines: "count",
  maxBytes: "count",
  lastLinePartial: "flag",
  firstLineExceedsLimit: "flag",
  spillPath: "path",
} as const satisfies Record<keyof Truncation, TruncationField>;

/** The keys of `Truncation`, in their documented order. */
export const TRUNCATION_KEYS = Object.keys(TRUNCATION_FIELDS) as (keyof Truncation)[];

/** The problem with `t` as a `Truncation` (named `what` in the message), or null. */
export function truncationError(t: unknown, what: string): TypeError | null {
  if (t === null || typeof t !== "object") return truncationShapeError(what);
  const r = t as Record<string, unknown>;
  for (const key of TRUNCATION_KEYS) {
    const error = truncationFieldError(key, r[key], what);
    if (error) return error;
  }
  return null;
}

/** The error for a `Truncation` that is not an object at all. */
export function truncationShapeError(what: string): TypeError {
  return new TypeError(`${what} must be an object of truncation fields.`);
}

/** The problem with `v` as the `Truncation` field `key` (of `what`), or null. */
export function truncationFieldError(
  key: keyof Truncation,
  v: unknown,
  what: string,
): TypeError | null {
  switch (TRUNCATION_FIELDS[key]) {
    case "count":
      if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
        return new TypeError(`${what}.${key} must be a non-negative integer, got ${String(v)}.`);
      }
      return null;
    case "flag":
      if (typeof v !== "boolean") {
        return new TypeError(`${what}.${key} must be a boolean, got ${String(v)}.`);
      }
      return null;
    case "cut":
      if (v !== null && v !== "lines" && v !== "bytes") {
        return new TypeError(`${what}.${key} must be "lines", "bytes" or null.`);
      }
      return null;
    case "path":
      if (v !== undefined && typeof v !== "string") {
        return new TypeError(`${what}.${key} must be a string when present.`);
      }
      return null;
  }
}

/**
 * A copy of the `Truncation` fields of `t` (extra fields left behind, an absent
 * `spillPath` left absent).
 * @example copyTruncation(update.metadata)
 */
export function copyTruncation(t: Truncation): Truncation {
  const copy: Record<string, unknown> = {};
  for (const key of TRUNCATION_KEYS) if (t[key] !== undefined) copy[key] = t[key];
  return copy as unknown as Truncation;
}
