/**
 * The bytes of this object's Durable Stream and what governs them, in SQLite (tables
 * `stream_meta`, `stream_data`, `stream_producers` of ../output/schema.ts): appends as
 * rows keyed by their first offset (each row saying where its append began), the
 * stream's settings and origin, and each producer's epoch and last seq. Synchronous SQL,
 * so a check and the append it guards are one step.
 */
import type { StreamSlice } from "../../../src/protocol/durable-streams/index.ts";
import { WaitList } from "../wait-list.ts";

/** A row holds at most this many bytes; a longer append is split (SQLite's row limit is 2 MB). */
const ROW_BYTES = 1024 * 1024;

/** A stream's settings, as `PUT` made them. */
export interface StreamMeta {
  contentType: string;
  /** Seconds the stream lives after its last read or write, or null. */
  ttlSeconds: number | null;
  /** The absolute end of the stream's life (epoch ms), or null. */
  expiresAt: number | null;
  closed: boolean;
  tail: number;
  /** The last `Stream-Seq` a writer sent, or null. */
  writerSeq: string | null;
  /** Changes each time the name is made again after a delete (part of the ETag). */
  generation: string;
  touchedAt: number;
  /** Where this stream was forked from, or null for a stream made without a source. */
  origin: ForkOrigin | null;
  /** Deleted while forks of it lived (decision 205): a name kept, no bytes. */
  deleted: boolean;
}

/** A fork's source as the fork's `PUT` named it: its name, which making of it, where. */
export interface ForkOrigin {
  name: string;
  generation: string;
  offset: number;
  subOffset: number;
}

type MetaRow = {
  content_type: string;
  ttl_seconds: number | null;
  expires_at: number | null;
  closed: number;
  tail: number;
  writer_seq: string | null;
  generation: string;
  touched_at: number;
  fork_of: string | null;
  fork_generation: string | null;
  fork_offset: number | null;
  fork_sub_offset: number | null;
  deleted: number;
};

type DataRow = { start: number; data: ArrayBuffer; append_start: number };

/** Whether `meta`'s stream has outlived its TTL or expiry at `now`. */
export function expired(meta: StreamMeta, now: number): boolean {
  if (meta.expiresAt !== null && now >= meta.expiresAt) return true;
  return meta.ttlSeconds !== null && now >= meta.touchedAt + meta.ttlSeconds * 1000;
}

/** A producer's place: the epoch it writes in and the last seq accepted there. */
type ProducerPlace = {
  epoch: number;
  seq: number;
};

/**
 * @example
 * const log = new StreamLog(ctx.storage.sql);
 * log.create({ contentType: "text/plain", ttlSeconds: null, expiresAt: null, closed: false });
 * log.append([new TextEncoder().encode("hi")]); // the new tail, 2
 */
export class StreamLog {
  readonly #sql: SqlStorage;
  /** Readers waiting for bytes past the tail (this instance's memory). */
  readonly #readers = new WaitList();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The stream's settings, or null when none was made here (or it was deleted). */
  meta(): StreamMeta | null {
    const row = this.#sql.exec<MetaRow>("SELECT * FROM stream_meta WHERE id = 1").toArray()[0];
    if (!row) return null;
    return {
      contentType: row.content_type,
      ttlSeconds: row.ttl_seconds,
      expiresAt: row.expires_at,
      closed: row.closed === 1,
      tail: row.tail,
      writerSeq: row.writer_seq,
      generation: row.generation,
      touchedAt: row.touched_at,
      origin:
        row.fork_of === null
          ? null
          : {
              name: row.fork_of,
              generation: row.fork_generation ?? "",
              offset: row.fork_offset ?? 0,
              subOffset: row.fork_sub_offset ?? 0,
            },
      deleted: row.deleted === 1,
    };
  }

  /** Makes the stream (empty). Call when `meta()` is null. */
  create(settings: Pick<StreamMeta, "contentType" | "ttlSeconds" | "expiresAt" | "origin">): void {
    const origin = settings.origin;
    this.#sql.exec(
      "INSERT INTO stream_meta (id, content_type, ttl_seconds, expires_at, closed, tail, writer_seq, generation, touched_at, fork_of, fork_generation, fork_offset, fork_sub_offset, deleted) VALUES (1, ?, ?, ?, 0, 0, NULL, ?, ?, ?, ?, ?, ?, 0)",
      settings.contentType,
      settings.ttlSeconds,
      settings.expiresAt,
      crypto.randomUUID().slice(0, 8),
      Date.now(),
      origin?.name ?? null,
      origin?.generation ?? null,
      origin?.offset ?? null,
      origin?.subOffset ?? null,
    );
  }

  /**
   * Appends `pieces` as one append (one row each in JSON mode: one message per row) and
   * answers the new tail. The offsets count bytes.
   */
  append(pieces: Uint8Array[]): number {
    let tail = this.#tail();
    const appendStart = tail;
    for (const piece of pieces) {
      for (let at = 0; at < piece.byteLength; at += ROW_BYTES) {
        const row = piece.subarray(at, at + ROW_BYTES);
        this.#sql.exec(
          "INSERT INTO stream_data (start, data, append_start) VALUES (?, ?, ?)",
          tail,
          row,
          appendStart,
        );
        tail += row.byteLength;
      }
    }
    this.#sql.exec("UPDATE stream_meta SET tail = ? WHERE id = 1", tail);
    this.#readers.wakeAll();
    return tail;
  }

  /** No byte follows the tail any more. */
  close(): void {
    this.#sql.exec("UPDATE stream_meta SET closed = 1 WHERE id = 1");
    this.#readers.wakeAll();
  }

  /** Records the last `Stream-Seq`. */
  setWriterSeq(seq: string): void {
    this.#sql.exec("UPDATE stream_meta SET writer_seq = ? WHERE id = 1", seq);
  }

  /** A read or write happened: a TTL counts from now. */
  touch(): void {
    this.#sql.exec("UPDATE stream_meta SET touched_at = ? WHERE id = 1", Date.now());
  }

  /** Forgets the stream, its bytes, its producers and its forks. */
  delete(): void {
    this.#sql.exec("DELETE FROM stream_meta");
    this.#sql.exec("DELETE FROM stream_forks");
    this.#forgetBytes();
  }

  /**
   * Deleted while forks of it live (decision 205): the name and the list of forks stay,
   * the bytes and producers go (every fork has its own copy).
   */
  softDelete(): void {
    this.#sql.exec("UPDATE stream_meta SET deleted = 1 WHERE id = 1");
    this.#forgetBytes();
  }

  #forgetBytes(): void {
    this.#sql.exec("DELETE FROM stream_data");
    this.#sql.exec("DELETE FROM stream_producers");
    this.#readers.wakeAll();
  }

  producer(id: string): ProducerPlace | null {
    return (
      this.#sql
        .exec<ProducerPlace>("SELECT epoch, seq FROM stream_producers WHERE producer_id = ?", id)
        .toArray()[0] ?? null
    );
  }

  setProducer(id: string, place: ProducerPlace): void {
    this.#sql.exec(
      "INSERT INTO stream_producers (producer_id, epoch, seq) VALUES (?, ?, ?) ON CONFLICT (producer_id) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq",
      id,
      place.epoch,
      place.seq,
    );
  }

  /**
   * The rows from `from` (the first one cut to start there in byte mode), about
   * `maxBytes` of them and at least one when there is one.
   */
  slice(from: number, maxBytes: number, closed: boolean, json: boolean): StreamSlice {
    const tail = this.#tail();
    const parts: Uint8Array[] = [];
    let next = from;
    if (maxBytes > 0 && from < tail) {
      const rows = this.#sql.exec<{ start: number; data: ArrayBuffer }>(
        "SELECT start, data FROM stream_data WHERE start + length(data) > ? ORDER BY start",
        from,
      );
      let size = 0;
      for (const row of rows) {
        const bytes = new Uint8Array(row.data);
        const piece = !json && row.start < from ? bytes.subarray(from - row.start) : bytes;
        if (parts.length > 0 && size + piece.byteLength > maxBytes) break;
        parts.push(piece);
        size += piece.byteLength;
        next = row.start + bytes.byteLength;
      }
    }
    return { parts, next, tail, closed };
  }

  /**
   * The appends before `offset` (each its rows), the last row cut there in byte mode;
   * null in JSON mode when `offset` is inside a message. A fork's inheritance
   * (stream-fork.ts).
   */
  prefix(offset: number, json: boolean): Uint8Array[][] | null {
    const appends: Uint8Array[][] = [];
    let current = -1;
    const rows = this.#sql.exec<DataRow>(
      "SELECT start, data, append_start FROM stream_data WHERE start < ? ORDER BY start",
      offset,
    );
    for (const row of rows) {
      const bytes = new Uint8Array(row.data);
      const end = row.start + bytes.byteLength;
      if (end > offset && json) return null;
      if (row.append_start !== current) {
        appends.push([]);
        current = row.append_start;
      }
      appends.at(-1)?.push(end <= offset ? bytes : bytes.slice(0, offset - row.start));
    }
    return appends;
  }

  /**
   * The rest of the append that holds the byte at `offset`, from there (the first row cut
   * at `offset` in byte mode): empty when no byte is there. A sub-offset fork's base.
   */
  appendFrom(offset: number, json: boolean): Uint8Array[] {
    const holder = this.#sql
      .exec<{ append_start: number }>(
        "SELECT append_start FROM stream_data WHERE start <= ? AND start + length(data) > ? ORDER BY start DESC LIMIT 1",
        offset,
        offset,
      )
      .toArray()[0];
    if (!holder) return [];
    const rows = this.#sql.exec<DataRow>(
      "SELECT start, data, append_start FROM stream_data WHERE append_start = ? AND start + length(data) > ? ORDER BY start",
      holder.append_start,
      offset,
    );
    const pieces: Uint8Array[] = [];
    for (const row of rows) {
      const bytes = new Uint8Array(row.data);
      pieces.push(!json && row.start < offset ? bytes.subarray(offset - row.start) : bytes);
    }
    return pieces;
  }

  /** Resolves at the next append, close or delete, at `until`, or when `signal` aborts. */
  async wait(until: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const aborted = new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    await Promise.race([this.#readers.wait(until - Date.now()), aborted]);
  }

  /** Wakes every waiting reader (the invocation behind the stream settled). */
  wake(): void {
    this.#readers.wakeAll();
  }

  #tail(): number {
    // The last row by its key: one index step, however long the stream.
    const row = this.#sql
      .exec<{ tail: number }>(
        "SELECT start + length(data) AS tail FROM stream_data ORDER BY start DESC LIMIT 1",
      )
      .toArray()[0];
    return row?.tail ?? 0;
  }
}
