/**
 * The bytes of this object's Durable Stream and what governs them, in SQLite (tables
 * `stream_meta`, `stream_data`, `stream_producers` of ../output/schema.ts): appends as
 * rows keyed by their first offset, the stream's settings, and each producer's
 * epoch and last seq. Synchronous SQL, so a check and the append it guards are one step.
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
};

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
    };
  }

  /** Makes the stream (empty). Call when `meta()` is null. */
  create(settings: Pick<StreamMeta, "contentType" | "ttlSeconds" | "expiresAt">): void {
    this.#sql.exec(
      "INSERT INTO stream_meta (id, content_type, ttl_seconds, expires_at, closed, tail, writer_seq, generation, touched_at) VALUES (1, ?, ?, ?, 0, 0, NULL, ?, ?)",
      settings.contentType,
      settings.ttlSeconds,
      settings.expiresAt,
      crypto.randomUUID().slice(0, 8),
      Date.now(),
    );
  }

  /**
   * Appends `pieces` (one row each in JSON mode: one message per row) and answers the
   * new tail. The offsets count bytes.
   */
  append(pieces: Uint8Array[]): number {
    let tail = this.#tail();
    for (const piece of pieces) {
      for (let at = 0; at < piece.byteLength; at += ROW_BYTES) {
        const row = piece.subarray(at, at + ROW_BYTES);
        this.#sql.exec("INSERT INTO stream_data (start, data) VALUES (?, ?)", tail, row);
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

  /** Forgets the stream, its bytes and its producers. */
  delete(): void {
    this.#sql.exec("DELETE FROM stream_meta");
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
   * The rows before `offset`, the last one cut there in byte mode; null in JSON mode
   * when `offset` is inside a message. A fork's inheritance (stream-fork.ts).
   */
  prefix(offset: number, json: boolean): Uint8Array[] | null {
    const pieces: Uint8Array[] = [];
    const rows = this.#sql.exec<{ start: number; data: ArrayBuffer }>(
      "SELECT start, data FROM stream_data WHERE start < ? ORDER BY start",
      offset,
    );
    for (const row of rows) {
      const bytes = new Uint8Array(row.data);
      const end = row.start + bytes.byteLength;
      if (end <= offset) pieces.push(bytes);
      else if (json) return null;
      else pieces.push(bytes.slice(0, offset - row.start));
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
