import type { JsonValue } from "../../../src/core/chord/types.ts";
import type { SettledResult } from "../../../src/core/output/types.ts";
import type { InvocationStatus } from "../../../src/protocol/index.ts";
import type { BatchLog } from "./batch-log.ts";
import { fromChunks, toChunks } from "./chunks.ts";

/** The invocation this object holds, as stored. */
export interface InvocationRecord {
  toolCallId: string;
  tool: string;
  args: JsonValue;
  runId: string;
  turnId: string;
  sandbox: string;
  status: InvocationStatus;
  isError: boolean;
  cancelled: boolean;
  createdAt: number;
  settledAt: number | null;
  /** When the retention alarm deletes a settled invocation. */
  deleteAt: number | null;
  /** Seq of the base batch written with the latest memo (or at start). */
  checkpointSeq: number | null;
}

type RecordRow = {
  tool_call_id: string;
  tool: string;
  args: string;
  run_id: string;
  turn_id: string;
  sandbox: string;
  status: string;
  is_error: number;
  cancelled: number;
  created_at: number;
  settled_at: number | null;
  delete_at: number | null;
  checkpoint_seq: number | null;
};

/** Storage use of one invocation (tests and benchmarks). */
export interface StorageStats {
  batchBytes: number;
  batchRows: number;
  resultBytes: number;
  memos: number;
  bytesAppended: number;
}

/**
 * What the batch log and the store hold now.
 * @example storageStatsOf(log, store).batchRows // 3
 */
export function storageStatsOf(log: BatchLog, store: InvocationStore): StorageStats {
  return {
    batchBytes: log.storedBytes(),
    batchRows: log.storedRows(),
    resultBytes: store.resultBytes(),
    memos: store.memoCount(),
    bytesAppended: log.bytesAppended,
  };
}

/**
 * Rows of the invocation record, memos and the settled result (schema in `schema.ts`).
 * Every method is synchronous SQL; callers group writes with `transactionSync`.
 *
 * @example
 * const store = new InvocationStore(ctx.storage.sql);
 * store.record()?.status; // "running" | "settled" | undefined
 */
export class InvocationStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  record(): InvocationRecord | undefined {
    const row = this.#sql.exec<RecordRow>("SELECT * FROM invocation WHERE id = 1").toArray()[0];
    if (!row) return undefined;
    return {
      toolCallId: row.tool_call_id,
      tool: row.tool,
      args: JSON.parse(row.args) as JsonValue,
      runId: row.run_id,
      turnId: row.turn_id,
      sandbox: row.sandbox,
      status: row.status === "settled" ? "settled" : "running",
      isError: row.is_error === 1,
      cancelled: row.cancelled === 1,
      createdAt: row.created_at,
      settledAt: row.settled_at,
      deleteAt: row.delete_at,
      checkpointSeq: row.checkpoint_seq,
    };
  }

  insertRecord(r: InvocationRecord): void {
    this.#sql.exec(
      `INSERT INTO invocation (id, tool_call_id, tool, args, run_id, turn_id, sandbox, status,
         is_error, cancelled, created_at, settled_at, delete_at, checkpoint_seq)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      r.toolCallId,
      r.tool,
      JSON.stringify(r.args),
      r.runId,
      r.turnId,
      r.sandbox,
      r.status,
      r.isError ? 1 : 0,
      r.cancelled ? 1 : 0,
      r.createdAt,
      r.settledAt,
      r.deleteAt,
      r.checkpointSeq,
    );
  }

  setCheckpoint(seq: number): void {
    this.#sql.exec("UPDATE invocation SET checkpoint_seq = ? WHERE id = 1", seq);
  }

  markSettled(s: {
    isError: boolean;
    cancelled: boolean;
    settledAt: number;
    deleteAt: number;
  }): void {
    this.#sql.exec(
      "UPDATE invocation SET status = 'settled', is_error = ?, cancelled = ?, settled_at = ?, delete_at = ?, checkpoint_seq = NULL WHERE id = 1",
      s.isError ? 1 : 0,
      s.cancelled ? 1 : 0,
      s.settledAt,
      s.deleteAt,
    );
  }

  getMemo(name: string): JsonValue | undefined {
    const row = this.#sql
      .exec<{ value: string }>("SELECT value FROM memos WHERE name = ?", name)
      .toArray()[0];
    return row ? (JSON.parse(row.value) as JsonValue) : undefined;
  }

  setMemo(name: string, value: JsonValue): void {
    this.#sql.exec(
      "INSERT INTO memos (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      name,
      JSON.stringify(value),
    );
  }

  clearMemos(): void {
    this.#sql.exec("DELETE FROM memos");
  }

  memoCount(): number {
    return this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM memos").one().n;
  }

  /** The settled result stored, the record marked settled, the memos deleted. */
  settle(result: SettledResult, marks: Parameters<InvocationStore["markSettled"]>[0]): void {
    this.writeResult(result);
    this.markSettled(marks);
    this.clearMemos();
  }

  writeResult(result: SettledResult): void {
    this.#sql.exec("DELETE FROM result");
    toChunks(result).forEach((chunk, part) => {
      this.#sql.exec("INSERT INTO result (part, data) VALUES (?, ?)", part, chunk);
    });
  }

  result(): SettledResult | undefined {
    const rows = this.#sql
      .exec<{ data: ArrayBuffer }>("SELECT data FROM result ORDER BY part")
      .toArray();
    return rows.length === 0 ? undefined : fromChunks<SettledResult>(rows.map((r) => r.data));
  }

  resultBytes(): number {
    return (
      this.#sql
        .exec<{ bytes: number | null }>("SELECT SUM(LENGTH(data)) AS bytes FROM result")
        .one().bytes ?? 0
    );
  }
}
