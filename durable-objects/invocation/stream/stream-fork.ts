/**
 * Forks (`PUT` with `Stream-Forked-From` and, optionally, `Stream-Fork-Offset`): the fork
 * is a stream of its own whose first bytes are a copy of the source's up to the offset
 * (decision 204). The source's object answers `forkSource` with that prefix and its
 * settings; the fork's object stores them and goes on alone.
 */
import { MAX_APPEND_BYTES, parseOffset } from "../../../src/protocol/durable-streams/index.ts";
import { expired, type StreamLog } from "./stream-log.ts";

/** What a fork inherits. */
interface ForkPrefix {
  contentType: string;
  ttlSeconds: number | null;
  expiresAt: number | null;
  pieces: Uint8Array[];
}

/** The source's answer: the prefix, or why not (the status the fork's `PUT` answers). */
export type ForkAnswer =
  | { ok: true; prefix: ForkPrefix }
  | { ok: false; status: 400 | 404 | 413; message: string };

/** The header naming a fork's source, and its offset. */
export const FORKED_FROM = "Stream-Forked-From";
export const FORK_OFFSET = "Stream-Fork-Offset";
/** A position inside one append or JSON batch; refused here (decision 204). */
export const FORK_SUB_OFFSET = "Stream-Fork-Sub-Offset";

/**
 * The source side: this stream's bytes up to `offset` (its tail when null).
 * @example forkPrefix(log, "0000000000000005")
 */
export function forkPrefix(log: StreamLog, offset: string | null): ForkAnswer {
  const meta = log.meta();
  if (!meta || expired(meta, Date.now())) {
    return { ok: false, status: 404, message: `${FORKED_FROM}: no such stream to fork` };
  }
  const requested = offset === null ? { kind: "now" as const } : parseOffset(offset);
  if (requested === null) {
    return {
      ok: false,
      status: 400,
      message: `${FORK_OFFSET}: "${offset}" is not an offset of the source`,
    };
  }
  const at =
    requested.kind === "at" ? requested.position : requested.kind === "now" ? meta.tail : 0;
  if (at > meta.tail) {
    return {
      ok: false,
      status: 400,
      message: `${FORK_OFFSET}: past the source's end (${meta.tail})`,
    };
  }
  if (at > MAX_APPEND_BYTES) {
    return {
      ok: false,
      status: 413,
      message: `${FORK_OFFSET}: a fork copies at most ${MAX_APPEND_BYTES} bytes (16 MiB) of its source`,
    };
  }
  const json = /^application\/json/i.test(meta.contentType);
  const pieces = log.prefix(at, json);
  if (pieces === null) {
    return {
      ok: false,
      status: 400,
      message: `${FORK_OFFSET}: not at a message boundary of the source`,
    };
  }
  return {
    ok: true,
    prefix: {
      contentType: meta.contentType,
      ttlSeconds: meta.ttlSeconds,
      expiresAt: meta.expiresAt,
      pieces,
    },
  };
}

/** The source's name in `Stream-Forked-From` (`/v1/stream/<name>` or a full URL of it), or null. */
export function forkSourceName(request: Request): string | null | undefined {
  const value = request.headers.get(FORKED_FROM);
  if (value === null) return undefined;
  let path = value;
  try {
    path = new URL(value, request.url).pathname;
  } catch {
    return null;
  }
  const match = /^\/v1\/stream\/([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/.exec(path);
  return match?.[1] ?? null;
}

/** Whether the request names a fork offset without a source (a 400). */
export function offsetWithoutSource(request: Request): boolean {
  return request.headers.get(FORK_OFFSET) !== null && request.headers.get(FORKED_FROM) === null;
}
