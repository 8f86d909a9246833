/**
 * The write side of a Durable Stream (`PUT`, `POST`, `DELETE` of `/v1/stream/:name`):
 * creation with its content type, TTL or expiry and closed flag; appends in byte or JSON
 * mode; `Stream-Seq` writer ordering; idempotent producers (`Producer-Id`, `-Epoch`,
 * `-Seq`, decision 203); closing; deleting. Every check runs before anything is stored.
 */
import { concatBytes } from "../../../src/protocol/bytes.ts";
import {
  appendTooLarge,
  formatOffset,
  HEADER,
  isJsonType,
  MAX_APPEND_BYTES,
  mediaType,
  SECURITY_HEADERS,
  streamError,
} from "../../../src/protocol/durable-streams/index.ts";
import { type ForkPrefix, forkRequest, originOf, sameOrigin } from "./stream-fork.ts";
import type { StreamPeers } from "./stream-lineage.ts";
import type { StreamLog, StreamMeta } from "./stream-log.ts";

/** The type of a stream made without a `Content-Type`. */
const DEFAULT_TYPE = "application/octet-stream";

/** Headers that tell a stream's life: its TTL and its expiry. */
export function lifeHeaders(meta: StreamMeta): Record<string, string> {
  return {
    ...(meta.ttlSeconds !== null ? { [HEADER.ttl]: String(meta.ttlSeconds) } : {}),
    ...(meta.expiresAt !== null
      ? { [HEADER.expiresAt]: new Date(meta.expiresAt).toISOString() }
      : {}),
  };
}

type Life = { ttlSeconds: number | null; expiresAt: number | null };

function parseLife(request: Request): Life | Response {
  const ttl = request.headers.get(HEADER.ttl);
  const expires = request.headers.get(HEADER.expiresAt);
  if (ttl !== null && expires !== null) {
    return streamError(
      "bad_request",
      `${HEADER.ttl} and ${HEADER.expiresAt} together: a stream has one or the other`,
      SECURITY_HEADERS,
    );
  }
  if (ttl !== null) {
    if (!/^(0|[1-9]\d{0,14})$/.test(ttl)) {
      return streamError(
        "bad_request",
        `${HEADER.ttl}: "${ttl}" is not a whole number of seconds (digits only, no sign or leading zero)`,
      );
    }
    return { ttlSeconds: Number(ttl), expiresAt: null };
  }
  if (expires !== null) {
    const at = Date.parse(expires);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(expires) || Number.isNaN(at)) {
      return streamError(
        "bad_request",
        `${HEADER.expiresAt}: "${expires}" is not an RFC 3339 time such as 2030-01-01T00:00:00Z`,
      );
    }
    return { ttlSeconds: null, expiresAt: at };
  }
  return { ttlSeconds: null, expiresAt: null };
}

function closing(request: Request): boolean {
  return request.headers.get(HEADER.closed)?.toLowerCase() === "true";
}

/** The body's bytes, or a 413 past `MAX_APPEND_BYTES` (checked as they arrive, not only by `Content-Length`). */
async function bodyOf(request: Request): Promise<Uint8Array | Response> {
  if (Number(request.headers.get("Content-Length") ?? 0) > MAX_APPEND_BYTES) {
    // The body is not read: cancel it, or the runtime reports an unread request body.
    await request.body?.cancel().catch(() => undefined);
    return appendTooLarge();
  }
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop early cancels the rest of the body.
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_APPEND_BYTES) return appendTooLarge();
    chunks.push(chunk);
  }
  return concatBytes(chunks);
}

/** The messages (JSON mode) or the one run of bytes (byte mode) an append stores. */
function piecesOf(
  body: Uint8Array,
  contentType: string,
  emptyArray: "refused" | "allowed",
): Uint8Array[] | Response {
  if (!isJsonType(contentType)) return body.byteLength > 0 ? [body] : [];
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    return streamError("bad_request", "body: not valid JSON; a JSON stream takes JSON values");
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0 && emptyArray === "refused") {
    return streamError(
      "bad_request",
      "body: an empty array appends nothing; send at least one value",
    );
  }
  const encoder = new TextEncoder();
  return messages.map((message) => encoder.encode(JSON.stringify(message)));
}

function ok(status: 200 | 201 | 204, headers: Record<string, string>): Response {
  return new Response(null, { status, headers: { ...SECURITY_HEADERS, ...headers } });
}

const FORK_REFUSALS = {
  400: "bad_request",
  404: "not_found",
  409: "conflict",
  413: "too_large",
} as const;

/** A `PUT` of a name soft-deleted while its forks live (decision 205). */
function nameHeld(): Response {
  return streamError(
    "conflict",
    "this name's stream was deleted while forks of it live; it can be made again once they are all deleted",
  );
}

/**
 * `PUT`: makes the stream (201), or answers 200 for the same settings again and 409 for
 * other ones. A fork asks its source for its prefix first and tells it once it is made.
 */
export async function createStream(
  request: Request,
  log: StreamLog,
  peers: StreamPeers,
): Promise<Response> {
  let life = parseLife(request);
  if (life instanceof Response) return life;
  const fork = forkRequest(request);
  if (fork instanceof Response) return fork;
  const stated = request.headers.get("Content-Type");
  let contentType = stated ?? DEFAULT_TYPE;
  let prefix: ForkPrefix | null = null;
  const current = log.meta();
  if (current?.deleted) return nameHeld();
  if (fork !== null) {
    // A fork takes its source's type and life unless the PUT says otherwise.
    if (!current) {
      const answer = await peers.forkSource(fork);
      if (!answer.ok) return streamError(FORK_REFUSALS[answer.status], answer.message);
      prefix = answer.prefix;
    }
    const from = prefix ?? current;
    if (from) {
      if (stated !== null && mediaType(stated) !== mediaType(from.contentType)) {
        return streamError(
          "conflict",
          `Content-Type ${stated} is not the source's ${from.contentType}`,
        );
      }
      contentType = from.contentType;
      if (life.ttlSeconds === null && life.expiresAt === null) {
        life = { ttlSeconds: from.ttlSeconds, expiresAt: from.expiresAt };
      }
    }
  }
  const close = closing(request);
  const body = await bodyOf(request);
  if (body instanceof Response) return body;
  const existing = log.meta();
  if (existing?.deleted) return nameHeld();
  if (existing) {
    const same =
      mediaType(existing.contentType) === mediaType(contentType) &&
      existing.ttlSeconds === life.ttlSeconds &&
      existing.expiresAt === life.expiresAt &&
      existing.closed === close &&
      sameOrigin(existing, fork);
    if (!same) {
      return streamError(
        "conflict",
        "the stream exists with other settings (content type, TTL, expiry, closed, or the fork it is); delete it first or use another name",
      );
    }
    return ok(200, {
      "Content-Type": existing.contentType,
      [HEADER.nextOffset]: formatOffset(existing.tail),
      ...(existing.closed ? { [HEADER.closed]: "true" } : {}),
      ...lifeHeaders(existing),
    });
  }
  if (fork !== null && prefix === null) {
    // The stream this fork PUT found was deleted while its body arrived: nothing was copied.
    return streamError("conflict", "the stream was deleted while this PUT arrived; send it again");
  }
  // A PUT may start a JSON stream with `[]`: made, and empty.
  const pieces = body.byteLength > 0 ? piecesOf(body, contentType, "allowed") : [];
  if (pieces instanceof Response) return pieces;
  const origin = fork && prefix ? originOf(fork, prefix) : null;
  log.create({ contentType, ...life, origin });
  for (const inherited of prefix?.appends ?? []) log.append(inherited);
  const tail = log.append(pieces);
  if (close) log.close();
  const meta = log.meta() as StreamMeta;
  // Told once the fork is stored: a fork its source missed only lets the source be
  // deleted outright, where a source told of a fork never made would stay held.
  if (origin) await peers.forkMade(origin, meta.generation).catch(() => undefined);
  return ok(201, {
    "Content-Type": contentType,
    Location: request.url,
    [HEADER.nextOffset]: formatOffset(tail),
    ...(close ? { [HEADER.closed]: "true" } : {}),
    ...lifeHeaders(meta),
  });
}

type Producer = { id: string; epoch: number; seq: number };

function parseProducer(request: Request): Producer | null | Response {
  const id = request.headers.get(HEADER.producerId);
  const epoch = request.headers.get(HEADER.producerEpoch);
  const seq = request.headers.get(HEADER.producerSeq);
  if (id === null && epoch === null && seq === null) return null;
  if (id === null || epoch === null || seq === null || id === "") {
    return streamError(
      "bad_request",
      `${HEADER.producerId}, ${HEADER.producerEpoch} and ${HEADER.producerSeq} go together: send all three or none`,
    );
  }
  const number = /^(0|[1-9]\d{0,15})$/;
  if (!number.test(epoch) || !number.test(seq)) {
    return streamError(
      "bad_request",
      `${HEADER.producerEpoch} and ${HEADER.producerSeq} are whole numbers from 0 to 2^53 - 1`,
    );
  }
  const [e, s] = [Number(epoch), Number(seq)];
  if (!Number.isSafeInteger(e) || !Number.isSafeInteger(s)) {
    return streamError(
      "bad_request",
      `${HEADER.producerEpoch} and ${HEADER.producerSeq} are at most 2^53 - 1`,
    );
  }
  return { id, epoch: e, seq: s };
}

/** What a producer's headers make of an append, against its stored place. */
type ProducerVerdict =
  | { kind: "apply" }
  | { kind: "duplicate" }
  | { kind: "refused"; response: Response };

function judgeProducer(producer: Producer, log: StreamLog): ProducerVerdict {
  const place = log.producer(producer.id);
  const echo = {
    [HEADER.producerEpoch]: String(place?.epoch ?? producer.epoch),
  };
  if (place !== null && producer.epoch < place.epoch) {
    return {
      kind: "refused",
      response: streamError(
        "forbidden",
        `${HEADER.producerEpoch} ${producer.epoch} is older than this producer's epoch ${place.epoch}: a newer instance of it has taken over`,
        echo,
      ),
    };
  }
  if (place === null || producer.epoch > place.epoch) {
    if (producer.seq === 0) return { kind: "apply" };
    return {
      kind: "refused",
      response: streamError(
        "bad_request",
        `${HEADER.producerSeq} ${producer.seq}: a producer's first append in an epoch takes seq 0`,
      ),
    };
  }
  if (producer.seq <= place.seq) return { kind: "duplicate" };
  if (producer.seq === place.seq + 1) return { kind: "apply" };
  return {
    kind: "refused",
    response: streamError(
      "conflict",
      `${HEADER.producerSeq} ${producer.seq} leaves a gap: the expected seq is ${place.seq + 1}; nothing was appended`,
      {
        [HEADER.producerExpectedSeq]: String(place.seq + 1),
        [HEADER.producerReceivedSeq]: String(producer.seq),
      },
    ),
  };
}

/** `POST`: appends, closes, or both; a producer's retry is answered without appending again. */
export async function appendToStream(request: Request, log: StreamLog): Promise<Response> {
  const meta = log.meta();
  if (!meta) return streamError("not_found", "no such stream; create it with PUT first");
  const producer = parseProducer(request);
  if (producer instanceof Response) return producer;
  const body = await bodyOf(request);
  if (body instanceof Response) return body;
  const close = closing(request);
  const closedHeaders = { [HEADER.closed]: "true", [HEADER.nextOffset]: formatOffset(meta.tail) };
  if (body.byteLength === 0 && !close) {
    return streamError(
      "bad_request",
      "body: empty; an append needs bytes (or Stream-Closed: true to close)",
    );
  }
  const contentType = request.headers.get("Content-Type");
  if (body.byteLength > 0) {
    if (contentType === null) {
      return streamError(
        "bad_request",
        `Content-Type: missing; this stream takes ${meta.contentType}`,
      );
    }
    if (mediaType(contentType) !== mediaType(meta.contentType)) {
      return streamError(
        "conflict",
        `Content-Type ${contentType} is not the stream's ${meta.contentType}`,
      );
    }
  }
  const pieces = body.byteLength > 0 ? piecesOf(body, meta.contentType, "refused") : [];
  if (pieces instanceof Response) return pieces;
  const verdict = producer ? judgeProducer(producer, log) : { kind: "apply" as const };
  if (verdict.kind === "refused") return verdict.response;
  const producerHeaders: Record<string, string> = producer
    ? { [HEADER.producerEpoch]: String(producer.epoch), [HEADER.producerSeq]: String(producer.seq) }
    : {};
  if (verdict.kind === "duplicate" && producer) {
    // A retry is told where the producer stands: the highest seq accepted, not its own.
    const place = log.producer(producer.id);
    return ok(204, {
      [HEADER.nextOffset]: formatOffset(meta.tail),
      ...(meta.closed ? { [HEADER.closed]: "true" } : {}),
      [HEADER.producerEpoch]: String(place?.epoch ?? producer.epoch),
      [HEADER.producerSeq]: String(place?.seq ?? producer.seq),
    });
  }
  if (meta.closed) {
    if (body.byteLength === 0) return ok(204, closedHeaders);
    return streamError(
      "conflict",
      "the stream is closed; nothing more can be appended",
      closedHeaders,
    );
  }
  const seq = request.headers.get(HEADER.seq);
  if (seq !== null && meta.writerSeq !== null && seq <= meta.writerSeq) {
    return streamError(
      "conflict",
      `${HEADER.seq} "${seq}" does not sort after the last one, "${meta.writerSeq}"`,
    );
  }
  if (seq !== null) log.setWriterSeq(seq);
  if (producer) log.setProducer(producer.id, { epoch: producer.epoch, seq: producer.seq });
  const tail = log.append(pieces);
  if (close) log.close();
  log.touch();
  // A producer's append is 200 (its headers echoed); a close without bytes, like a plain append, 204.
  return ok(producer && pieces.length > 0 ? 200 : 204, {
    [HEADER.nextOffset]: formatOffset(tail),
    ...(close ? { [HEADER.closed]: "true" } : {}),
    ...producerHeaders,
  });
}
