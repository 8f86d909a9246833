/**
 * The Durable Streams wire as Toolwire speaks it: header names, the offset format, the
 * long-poll cursor, content-type classes and the caps every stream answer shares
 * (docs/protocol.md#durable-streams, decisions 200-203). Web standards only.
 */

/** Headers of the protocol (HTTP header names are case-insensitive; these are the canonical spellings). */
export const HEADER = {
  nextOffset: "Stream-Next-Offset",
  upToDate: "Stream-Up-To-Date",
  closed: "Stream-Closed",
  cursor: "Stream-Cursor",
  ttl: "Stream-TTL",
  expiresAt: "Stream-Expires-At",
  seq: "Stream-Seq",
  sseEncoding: "Stream-SSE-Data-Encoding",
  producerId: "Producer-Id",
  producerEpoch: "Producer-Epoch",
  producerSeq: "Producer-Seq",
  producerExpectedSeq: "Producer-Expected-Seq",
  producerReceivedSeq: "Producer-Received-Seq",
} as const;

/** Digits of an offset: a byte position, zero-padded so that offsets sort as strings. */
const OFFSET_DIGITS = 16;

/** How long one SSE answer stays open before the server closes it and the reader reconnects. */
export const SSE_OPEN_MS = 60_000;

/** Bytes at most in one catch-up answer or one SSE data event (a reader asks again for more). */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** Bytes at most in one `PUT` or `POST` body (16 MiB; exactly that is accepted); more is a 413. */
export const MAX_APPEND_BYTES = 16 * 1024 * 1024;

/** The width of one cursor interval: long-poll answers in one interval share a cursor. */
const CURSOR_INTERVAL_MS = 20_000;

/**
 * An offset as the wire carries it: opaque to readers, ordered as strings.
 * @example formatOffset(1234) // "0000000000001234"
 */
export function formatOffset(position: number): string {
  return String(position).padStart(OFFSET_DIGITS, "0");
}

/** A requested offset: the start, the current tail, or a position this server gave out. */
type RequestedOffset = { kind: "start" } | { kind: "now" } | { kind: "at"; position: number };

/**
 * The zero offset in the reference server's `<read seq>_<byte offset>` form: taken as
 * position 0. No other offset of that form names a position here (its halves count that
 * server's own storage), and none is ever given out (decision 205).
 */
const REFERENCE_ZERO_OFFSET = "0000000000000000_0000000000000000";

/**
 * The `offset` query parameter, or null when it is none this server could have given.
 * @example parseOffset("-1") // { kind: "start" }
 */
export function parseOffset(value: string | undefined): RequestedOffset | null {
  if (value === undefined || value === "-1") return { kind: "start" };
  if (value === "now") return { kind: "now" };
  if (value === REFERENCE_ZERO_OFFSET) return { kind: "at", position: 0 };
  if (!/^\d{16}$/.test(value)) return null;
  const position = Number(value);
  return Number.isSafeInteger(position) ? { kind: "at", position } : null;
}

/**
 * The cursor a long-poll or SSE answer carries: the current interval's number, and always
 * past the reader's own, so a CDN never serves a reader the answer it already had.
 * @example nextCursor("12", Date.now())
 */
export function nextCursor(readerCursor: string | undefined, now: number): string {
  const interval = Math.floor(now / CURSOR_INTERVAL_MS);
  const theirs =
    readerCursor !== undefined && /^\d{1,15}$/.test(readerCursor) ? Number(readerCursor) : -1;
  return String(Math.max(interval, theirs + 1));
}

/** The media type of a `Content-Type` value, lower case and without parameters. */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** JSON mode: each append is one message (an array, each element), reads answer arrays. */
export function isJsonType(contentType: string): boolean {
  return mediaType(contentType) === "application/json";
}

/** Bytes SSE can carry as text; every other type goes base64 (`Stream-SSE-Data-Encoding`). */
export function isTextType(contentType: string): boolean {
  const type = mediaType(contentType);
  return type.startsWith("text/") || type === "application/json" || type.endsWith("+json");
}

/**
 * Headers on every stream answer, errors included: no sniffing, readable cross-origin,
 * the stream headers exposed to browsers.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Cross-Origin-Resource-Policy": "cross-origin",
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": [...Object.values(HEADER), "ETag"].join(", "),
};

/** The preflight answer's allowances (`OPTIONS`). */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Methods": "GET, HEAD, PUT, POST, DELETE, OPTIONS",
  "Access-Control-Allow-Headers": [
    "Authorization",
    "Content-Type",
    "If-None-Match",
    ...Object.values(HEADER),
  ].join(", "),
  "Access-Control-Max-Age": "86400",
};
