/**
 * The read side of a Durable Stream, over any source of bytes: `HEAD`, catch-up `GET`,
 * `live=long-poll` and `live=sse`, with the offset, up-to-date, closed and cursor
 * headers, `ETag`/`If-None-Match` and `Cache-Control` (decision 202). The Worker serves
 * a bash call's spill through it, the Invocation Durable Object every other stream.
 */
import { concatBytes } from "../bytes.ts";
import { apiError, errorResponse } from "../errors.ts";
import {
  formatOffset,
  HEADER,
  isJsonType,
  isTextType,
  MAX_APPEND_BYTES,
  nextCursor,
  parseOffset,
  READ_CHUNK_BYTES,
  SECURITY_HEADERS,
  SSE_OPEN_MS,
} from "./wire.ts";

/** What a source holds at and after one position. */
export interface StreamSlice {
  /** Whole messages in JSON mode; in byte mode any runs of bytes, or one body to pass through. */
  parts: Uint8Array[] | ReadableStream<Uint8Array>;
  /** The offset just after these bytes. */
  next: number;
  /** The offset just after the last byte the stream holds now. */
  tail: number;
  /** No byte will ever follow `tail`. */
  closed: boolean;
}

/** A stream's bytes, as the reader needs them. */
export interface StreamSource {
  readonly contentType: string;
  /** Changes whenever the name holds another stream (deleted and made again): part of the ETag. */
  readonly identity: string;
  /** Headers every answer carries besides the protocol's (TTL, expiry). */
  readonly headers?: Record<string, string>;
  /**
   * The bytes from `from` (at most about `maxBytes`, whole messages in JSON mode; `0` for
   * only the tail), or `"gone"` when they are no longer kept. With `whole`, the caller
   * takes every byte to the tail as one body (`parts` may then be a stream).
   */
  read(from: number, maxBytes: number, whole?: boolean): Promise<StreamSlice | "gone">;
  /** Resolves when bytes past `from` may have come or the stream closed, or at `until` (epoch ms). */
  wait(from: number, until: number, signal: AbortSignal): Promise<void>;
}

/** A refusal of a stream route, in the API's error shape, with the stream's security headers. */
export function streamError(
  code: Parameters<typeof apiError>[0],
  message: string,
  headers: Record<string, string> = {},
): Response {
  return errorResponse(apiError(code, message), { ...SECURITY_HEADERS, ...headers });
}

/** The 413 of a body over `MAX_APPEND_BYTES`, wherever it is noticed. */
export function appendTooLarge(): Response {
  return streamError(
    "too_large",
    `body: over ${MAX_APPEND_BYTES} bytes (16 MiB), the most one append takes; split it into several`,
  );
}

/** How long the reader waits: a long-poll (`STREAM_LONG_POLL_SECONDS`), an SSE answer. */
interface ReadTiming {
  longPollMs: number;
  sseOpenMs: number;
}

/**
 * Answers a `GET` or `HEAD` of a stream from `source`.
 * @example return answerRead(request, source)
 */
export async function answerRead(
  request: Request,
  source: StreamSource,
  longPollMs: number,
): Promise<Response> {
  const timing: ReadTiming = { longPollMs, sseOpenMs: SSE_OPEN_MS };
  const url = new URL(request.url);
  const base = { ...SECURITY_HEADERS, ...source.headers };
  if (request.method === "HEAD") {
    const slice = await source.read(0, 0);
    if (slice === "gone") return gone(base);
    return new Response(null, {
      status: 200,
      headers: {
        ...base,
        "Content-Type": source.contentType,
        [HEADER.nextOffset]: formatOffset(slice.tail),
        ...(slice.closed ? { [HEADER.closed]: "true" } : {}),
        "Cache-Control": "no-store",
      },
    });
  }
  const requested = parseOffset(url.searchParams.get("offset") ?? undefined);
  if (requested === null) {
    return streamError(
      "bad_request",
      `query.offset: "${url.searchParams.get("offset")}" is not an offset; use -1 for the start, now for the tail, or a Stream-Next-Offset this stream gave`,
      base,
    );
  }
  const live = url.searchParams.get("live");
  if (live !== null && live !== "long-poll" && live !== "sse") {
    return streamError(
      "bad_request",
      `query.live: "${live}" is not a live mode; use long-poll or sse, or leave it out for a catch-up read`,
      base,
    );
  }
  if (live !== null && !url.searchParams.has("offset")) {
    return streamError(
      "bad_request",
      `query.offset: live=${live} needs an offset (-1 for the start, now for the tail)`,
      base,
    );
  }
  let from = requested.kind === "at" ? requested.position : 0;
  if (requested.kind === "now") {
    const head = await source.read(0, 0);
    if (head === "gone") return gone(base);
    from = head.tail;
  }
  const cursor = url.searchParams.get("cursor") ?? undefined;
  if (live === "sse") return sse(request, source, from, cursor, base, timing);
  let slice = await source.read(from, READ_CHUNK_BYTES, true);
  if (slice === "gone") return gone(base);
  if (from > slice.tail) {
    return streamError(
      "bad_request",
      `query.offset: ${formatOffset(from)} is past the stream's end (${formatOffset(slice.tail)})`,
      base,
    );
  }
  if (live === "long-poll") {
    if (slice.next === from && !slice.closed) {
      await source.wait(from, Date.now() + timing.longPollMs, request.signal);
      slice = await source.read(from, READ_CHUNK_BYTES, true);
      if (slice === "gone") return gone(base);
    }
    const liveHeaders = { ...base, [HEADER.cursor]: nextCursor(cursor, Date.now()) };
    if (slice.next === from) return noContent(slice, liveHeaders);
    return bytesAnswer(request, source, from, slice, liveHeaders, "no-store");
  }
  const caching = requested.kind === "now" ? "no-store" : cacheControlOf(slice);
  return bytesAnswer(request, source, from, slice, base, caching);
}

/** Ranges that will never change are cacheable for long; the tail is revalidated by ETag. */
function cacheControlOf(slice: StreamSlice): string {
  const final = slice.next < slice.tail || slice.closed;
  return final ? "private, max-age=31536000, immutable" : "private, no-cache";
}

function gone(headers: Record<string, string>): Response {
  return streamError(
    "gone",
    "the offset is before what this stream still keeps; read again from -1",
    headers,
  );
}

function positionHeaders(slice: StreamSlice): Record<string, string> {
  const atTail = slice.next >= slice.tail;
  return {
    [HEADER.nextOffset]: formatOffset(slice.next),
    ...(atTail ? { [HEADER.upToDate]: "true" } : {}),
    ...(atTail && slice.closed ? { [HEADER.closed]: "true" } : {}),
  };
}

function noContent(slice: StreamSlice, headers: Record<string, string>): Response {
  return new Response(null, {
    status: 204,
    headers: { ...headers, ...positionHeaders(slice), "Cache-Control": "no-store" },
  });
}

function bytesAnswer(
  request: Request,
  source: StreamSource,
  from: number,
  slice: StreamSlice,
  headers: Record<string, string>,
  caching: string,
): Response {
  const etag = `"${source.identity}:${from}:${slice.next}${slice.closed && slice.next >= slice.tail ? ":c" : ""}"`;
  const all = {
    ...headers,
    ...positionHeaders(slice),
    "Content-Type": source.contentType,
    ETag: etag,
    "Cache-Control": caching,
  };
  const match = request.headers.get("If-None-Match");
  if (match?.split(",").some((tag) => tag.trim() === etag)) {
    if (slice.parts instanceof ReadableStream) void slice.parts.cancel();
    return new Response(null, { status: 304, headers: all });
  }
  const body: BodyInit =
    slice.parts instanceof ReadableStream
      ? slice.parts
      : isJsonType(source.contentType)
        ? jsonArray(slice.parts)
        : concatBytes(slice.parts);
  return new Response(body, { status: 200, headers: all });
}

const encoder = new TextEncoder();

/** JSON mode's answer: the messages as one array. */
function jsonArray(messages: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const pieces: Uint8Array[] = [encoder.encode("[")];
  messages.forEach((message, i) => {
    if (i > 0) pieces.push(encoder.encode(","));
    pieces.push(message);
  });
  pieces.push(encoder.encode("]"));
  return concatBytes(pieces);
}

/** The text of a `data` event: base64 for binary types, the messages' array in JSON mode. */
function dataEventOf(source: StreamSource, parts: Uint8Array[]): string {
  let payload: string;
  if (isJsonType(source.contentType)) payload = new TextDecoder().decode(jsonArray(parts));
  else if (isTextType(source.contentType)) payload = new TextDecoder().decode(concatBytes(parts));
  else payload = base64(concatBytes(parts));
  const lines = payload.split(/\r\n|\r|\n/).map((line) => `data:${line}`);
  return `event: data\n${lines.join("\n")}\n\n`;
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/**
 * Cuts a text slice at the last whole UTF-8 character, so an SSE event never splits one;
 * the rest comes in the next event.
 */
function wholeCharacters(parts: Uint8Array[], from: number, slice: StreamSlice): StreamSlice {
  const bytes = concatBytes(parts);
  let end = bytes.length;
  let back = 0;
  while (back < 4 && end - back - 1 >= 0 && ((bytes[end - back - 1] ?? 0) & 0xc0) === 0x80) back++;
  const lead = bytes[end - back - 1];
  if (lead !== undefined && lead >= 0xc0) {
    const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (back + 1 < width) end -= back + 1;
  }
  if (end === bytes.length) return slice;
  return { ...slice, parts: [bytes.subarray(0, end)], next: from + end };
}

function sse(
  request: Request,
  source: StreamSource,
  start: number,
  cursor: string | undefined,
  headers: Record<string, string>,
  timing: ReadTiming,
): Response {
  const binary = !isTextType(source.contentType);
  const closeAt = Date.now() + timing.sseOpenMs;
  const stop = new AbortController();
  request.signal.addEventListener("abort", () => stop.abort());
  let from = start;
  let toldUpToDate = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!stop.signal.aborted) {
        let slice = await source.read(from, READ_CHUNK_BYTES);
        if (slice === "gone") {
          controller.close();
          return;
        }
        const parts = slice.parts instanceof ReadableStream ? [] : slice.parts;
        if (slice.next > from && !binary && !isJsonType(source.contentType) && !slice.closed) {
          slice = wholeCharacters(parts, from, slice);
        }
        const fresh = slice.parts instanceof ReadableStream ? [] : slice.parts;
        const atTail = slice.next >= slice.tail;
        const control = {
          streamNextOffset: formatOffset(slice.next),
          ...(atTail && slice.closed ? { streamClosed: true } : {}),
          ...(atTail && !slice.closed ? { streamCursor: nextCursor(cursor, Date.now()) } : {}),
          ...(atTail ? { upToDate: true } : {}),
        };
        if (slice.next > from || (atTail && !toldUpToDate) || (atTail && slice.closed)) {
          let text = "";
          if (slice.next > from) text += dataEventOf(source, fresh);
          text += `event: control\ndata:${JSON.stringify(control)}\n\n`;
          controller.enqueue(encoder.encode(text));
          from = slice.next;
          toldUpToDate = atTail;
          if (atTail && slice.closed) controller.close();
          return;
        }
        if (Date.now() >= closeAt) {
          controller.close();
          return;
        }
        await source.wait(from, Math.min(closeAt, Date.now() + timing.longPollMs), stop.signal);
      }
      controller.close();
    },
    cancel() {
      stop.abort();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      ...headers,
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      ...(binary ? { [HEADER.sseEncoding]: "base64" } : {}),
    },
  });
}
