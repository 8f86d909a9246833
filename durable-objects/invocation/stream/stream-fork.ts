/**
 * Forks (`PUT` with `Stream-Forked-From` and, optionally, `Stream-Fork-Offset` and
 * `Stream-Fork-Sub-Offset`): the fork is a stream of its own whose first bytes are a copy
 * of the source's up to the offset (decision 204), or up to a point inside the append at
 * the offset (decision 205). The source's object answers `forkSource` with that prefix
 * and its settings; the fork's object stores them and goes on alone.
 */
import {
  MAX_APPEND_BYTES,
  parseOffset,
  streamError,
} from "../../../src/protocol/durable-streams/index.ts";
import { expired, type ForkOrigin, type StreamLog, type StreamMeta } from "./stream-log.ts";

/** What a fork inherits. */
export interface ForkPrefix {
  contentType: string;
  ttlSeconds: number | null;
  expiresAt: number | null;
  /** The source's making this prefix is of (its `generation`). */
  generation: string;
  /** The fork offset as a byte position of the source. */
  offset: number;
  /** The appends before the fork point, each its rows (a sub-offset's part is the last). */
  appends: Uint8Array[][];
}

/** The source's answer: the prefix, or why not (the status the fork's `PUT` answers). */
export type ForkAnswer =
  | { ok: true; prefix: ForkPrefix }
  | { ok: false; status: 400 | 404 | 409 | 413; message: string };

/** The header naming a fork's source, its offset, and a position inside the append there. */
export const FORKED_FROM = "Stream-Forked-From";
export const FORK_OFFSET = "Stream-Fork-Offset";
export const FORK_SUB_OFFSET = "Stream-Fork-Sub-Offset";

/** What a `PUT` asks of a fork: the source's name, the offset as sent, the sub-offset (0: none). */
export interface ForkRequest {
  source: string;
  offset: string | null;
  subOffset: number;
}

/**
 * The fork a `PUT` asks for: null when it names no source, a 400 when its fork headers
 * do not go together or are not well formed.
 * @example forkRequest(new Request(url, { method: "PUT", headers: { "Stream-Forked-From": "/v1/stream/a" } }))
 */
export function forkRequest(request: Request): ForkRequest | null | Response {
  const from = request.headers.get(FORKED_FROM);
  const offset = request.headers.get(FORK_OFFSET);
  const sub = request.headers.get(FORK_SUB_OFFSET);
  if (from === null) {
    if (offset === null && sub === null) return null;
    const named = offset !== null ? FORK_OFFSET : FORK_SUB_OFFSET;
    return streamError("bad_request", `${named} without ${FORKED_FROM}: name the stream to fork`);
  }
  const source = sourceName(from, request.url);
  if (source === null) {
    return streamError("bad_request", `${FORKED_FROM}: not a /v1/stream/<name> of this server`);
  }
  if (sub === null) return { source, offset, subOffset: 0 };
  if (!/^(0|[1-9]\d{0,14})$/.test(sub)) {
    return streamError(
      "bad_request",
      `${FORK_SUB_OFFSET}: "${sub}" is not a whole number (digits only, no sign or leading zero)`,
    );
  }
  const subOffset = Number(sub);
  if (subOffset > 0 && offset === null) {
    return streamError(
      "bad_request",
      `${FORK_SUB_OFFSET} counts from a ${FORK_OFFSET}: send the offset of the append to fork inside`,
    );
  }
  return { source, offset, subOffset };
}

function sourceName(value: string, base: string): string | null {
  let path: string;
  try {
    path = new URL(value, base).pathname;
  } catch {
    return null;
  }
  const match = /^\/v1\/stream\/([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/.exec(path);
  return match?.[1] ?? null;
}

/**
 * Whether an existing stream is the fork `fork` asks for (a `PUT` made again): the same
 * source, the same offset when the `PUT` names one, the same sub-offset.
 */
export function sameOrigin(meta: StreamMeta, fork: ForkRequest | null): boolean {
  const origin = meta.origin;
  if (fork === null || origin === null) return fork === null && origin === null;
  if (origin.name !== fork.source || origin.subOffset !== fork.subOffset) return false;
  if (fork.offset === null) return true;
  const requested = parseOffset(fork.offset);
  return requested?.kind === "at" ? requested.position === origin.offset : false;
}

const refused = (status: 400 | 404 | 409 | 413, message: string): ForkAnswer => ({
  ok: false,
  status,
  message,
});

/**
 * The source side: this stream's bytes up to `offset` (its tail when null), and with a
 * sub-offset that many more bytes (byte mode) or messages (JSON mode) of the append that
 * holds `offset`.
 * @example forkPrefix(log, "0000000000000005", 3)
 */
export function forkPrefix(log: StreamLog, offset: string | null, subOffset: number): ForkAnswer {
  const meta = log.meta();
  if (!meta || expired(meta, Date.now())) {
    return refused(404, `${FORKED_FROM}: no such stream to fork`);
  }
  if (meta.deleted) {
    return refused(
      409,
      `${FORKED_FROM}: the source was deleted (its forks still live); it cannot be forked`,
    );
  }
  const requested = offset === null ? { kind: "now" as const } : parseOffset(offset);
  if (requested === null) {
    return refused(400, `${FORK_OFFSET}: "${offset}" is not an offset of the source`);
  }
  const at =
    requested.kind === "at" ? requested.position : requested.kind === "now" ? meta.tail : 0;
  if (at > meta.tail) {
    return refused(400, `${FORK_OFFSET}: past the source's end (${meta.tail})`);
  }
  const json = /^application\/json/i.test(meta.contentType);
  const appends = log.prefix(at, json);
  if (appends === null) {
    return refused(400, `${FORK_OFFSET}: not at a message boundary of the source`);
  }
  const inside = subOffset > 0 ? subPrefix(log, at, subOffset, json) : [];
  if (typeof inside === "string") return refused(400, `${FORK_SUB_OFFSET}: ${inside}`);
  const size = at + inside.reduce((sum, piece) => sum + piece.byteLength, 0);
  if (size > MAX_APPEND_BYTES) {
    return refused(
      413,
      `${FORK_OFFSET}: a fork copies at most ${MAX_APPEND_BYTES} bytes (16 MiB) of its source`,
    );
  }
  if (inside.length > 0) appends.push(inside);
  return {
    ok: true,
    prefix: {
      contentType: meta.contentType,
      ttlSeconds: meta.ttlSeconds,
      expiresAt: meta.expiresAt,
      generation: meta.generation,
      offset: at,
      appends,
    },
  };
}

/** The first `count` bytes or messages of the append at `at`, or why there are not that many. */
function subPrefix(
  log: StreamLog,
  at: number,
  count: number,
  json: boolean,
): Uint8Array[] | string {
  const rest = log.appendFrom(at, json);
  if (rest.length === 0) return "the source holds no byte at the fork offset to fork inside";
  if (json) {
    if (count > rest.length) {
      return `${count} is past the ${rest.length} messages of the append at the fork offset`;
    }
    return rest.slice(0, count);
  }
  const pieces: Uint8Array[] = [];
  let left = count;
  for (const row of rest) {
    if (left === 0) break;
    // A copy, not a view: the answer crosses to another object and carries its buffer.
    const piece = row.slice(0, left);
    pieces.push(piece);
    left -= piece.byteLength;
  }
  if (left > 0) {
    return `${count} is past the ${count - left} bytes of the append at the fork offset`;
  }
  return pieces;
}

/** The origin a fork stores: where its `PUT` forked, as the source answered. */
export function originOf(fork: ForkRequest, prefix: ForkPrefix): ForkOrigin {
  return {
    name: fork.source,
    generation: prefix.generation,
    offset: prefix.offset,
    subOffset: fork.subOffset,
  };
}
