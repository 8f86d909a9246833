import { upgradeLegacyWire } from "../../../src/core/chord/index.ts";
import type { WireOp } from "../../../src/core/chord/types.ts";
import { bytesToChunks, fromChunks, toChunks } from "./chunks.ts";

/** `"base"` for a batch whose first op is `r` (a recovery point), `"delta"` otherwise. */
type BatchTag = "base" | "delta";

interface StoredBatch {
  seq: number;
  tag: BatchTag;
  wire: WireOp[];
}

/** The one durable stream this object keeps: the invocation's output. */
const STREAM = "output";

/**
 * The durable batch log: one encoded `WireOp[]` per publication, in `seq` order.
 * Batches over 1 MiB are split across rows (see `chunks.ts`).
 *
 * @example
 * const log = new BatchLog(ctx.storage.sql);
 * const seq = log.append("base", encoder.encode([["r", state]]));
 * log.readFromLastBase(); // [{ seq, tag: "base", wire }]
 */
export class BatchLog {
  readonly #sql: SqlStorage;
  #lastSeq: number;
  #bytesAppended = 0;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    const row = sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM batches").one();
    this.#lastSeq = row.seq ?? 0;
  }

  /** Seq of the newest batch ever appended by this object (0 before the first). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Bytes of encoded batches appended through this instance (for benchmarks). */
  get bytesAppended(): number {
    return this.#bytesAppended;
  }

  /** Appends one batch and returns its seq. Call inside the caller's transaction. */
  append(tag: BatchTag, wire: WireOp[]): number {
    return this.#appendSerialized(tag, toChunks(wire));
  }

  /**
   * Appends one batch the caller has serialized already (its `WireOp[]` as UTF-8 JSON),
   * so it is serialized once; returns its seq. Call inside the caller's transaction.
   */
  appendJson(tag: BatchTag, json: Uint8Array): number {
    return this.#appendSerialized(tag, bytesToChunks(json));
  }

  #appendSerialized(tag: BatchTag, chunks: ArrayBuffer[]): number {
    const seq = ++this.#lastSeq;
    chunks.forEach((chunk, part) => {
      this.#bytesAppended += chunk.byteLength;
      this.#sql.exec(
        "INSERT INTO batches (seq, part, parts, stream, tag, wire) VALUES (?, ?, ?, ?, ?, ?)",
        seq,
        part,
        chunks.length,
        STREAM,
        tag,
        chunk,
      );
    });
    return seq;
  }

  /**
   * The newest base batch and every batch after it, oldest first: what recovery
   * decodes with a fresh decoder. Empty when the log holds no base.
   */
  readFromLastBase(): StoredBatch[] {
    const base = this.#sql
      .exec<{ seq: number }>(
        "SELECT seq FROM batches WHERE tag = 'base' AND stream = ? ORDER BY seq DESC LIMIT 1",
        STREAM,
      )
      .toArray()[0];
    if (!base) return [];
    return this.#readFrom(base.seq, Number.MAX_SAFE_INTEGER);
  }

  /** The single batch stored at `seq`, or undefined. */
  read(seq: number): StoredBatch | undefined {
    return this.#readFrom(seq, seq)[0];
  }

  /** Deletes batches older than `seq`, except the one at `keep` (the memo checkpoint). */
  pruneBefore(seq: number, keep: number | null): void {
    this.#sql.exec("DELETE FROM batches WHERE seq < ? AND seq IS NOT ?", seq, keep);
  }

  /** Deletes every batch (the invocation settled). `lastSeq` keeps counting. */
  clear(): void {
    this.#sql.exec("DELETE FROM batches");
  }

  /** Bytes of encoded ops currently stored. */
  storedBytes(): number {
    return (
      this.#sql
        .exec<{ bytes: number | null }>("SELECT SUM(LENGTH(wire)) AS bytes FROM batches")
        .one().bytes ?? 0
    );
  }

  /** Rows currently stored (a chunked batch counts once per part). */
  storedRows(): number {
    return this.#sql.exec<{ rows: number }>("SELECT COUNT(*) AS rows FROM batches").one().rows;
  }

  #readFrom(first: number, last: number): StoredBatch[] {
    const rows = this.#sql
      .exec<{ seq: number; part: number; parts: number; tag: string; wire: ArrayBuffer }>(
        "SELECT seq, part, parts, tag, wire FROM batches WHERE stream = ? AND seq BETWEEN ? AND ? ORDER BY seq, part",
        STREAM,
        first,
        last,
      )
      .toArray();
    const batches: StoredBatch[] = [];
    let pieces: ArrayBuffer[] = [];
    for (const row of rows) {
      pieces.push(row.wire);
      if (row.part !== row.parts - 1) continue;
      if (pieces.length !== row.parts) {
        throw new Error(
          `Batch ${row.seq} is incomplete: ${pieces.length} of ${row.parts} parts stored.`,
        );
      }
      batches.push({
        seq: row.seq,
        tag: row.tag === "base" ? "base" : "delta",
        // Rows written before the wire became the reference's read as today's (decision 008).
        wire: upgradeLegacyWire(fromChunks<unknown[]>(pieces)) as WireOp[],
      });
      pieces = [];
    }
    return batches;
  }
}
