/**
 * The Run DO's storage: its schema, its migrations and the one table of calls.
 * Migrations are appended, never edited (like schema.ts for the Invocation DO).
 */
import type { RunCall, RunNote } from "./run-notes.ts";

const RUN_MIGRATIONS: readonly string[] = [
  `CREATE TABLE calls (
     tool_call_id TEXT PRIMARY KEY,
     turn_id TEXT NOT NULL,
     tool TEXT NOT NULL,
     summary TEXT NOT NULL,
     status TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     settled_at INTEGER,
     total_lines INTEGER NOT NULL,
     total_bytes INTEGER NOT NULL
   )`,
  "CREATE INDEX calls_by_creation ON calls (created_at, tool_call_id)",
  // How a failed call ended, as JSON: `{ stoppedBy }` or `{ exitCode }` (decision 260).
  "ALTER TABLE calls ADD COLUMN ending TEXT",
];

type Row = {
  tool_call_id: string;
  turn_id: string;
  tool: string;
  summary: string;
  status: string;
  created_at: number;
  settled_at: number | null;
  total_lines: number;
  total_bytes: number;
  ending: string | null;
};

export class RunStore {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.reset();
  }

  /** Applies the missing migrations (after `deleteAll`, all of them). */
  reset(): void {
    const sql = this.#storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS run_schema_version (n INTEGER NOT NULL)");
    const applied =
      sql.exec<{ n: number }>("SELECT n FROM run_schema_version").toArray()[0]?.n ?? 0;
    if (applied >= RUN_MIGRATIONS.length) return;
    this.#storage.transactionSync(() => {
      for (const statement of RUN_MIGRATIONS.slice(applied)) sql.exec(statement);
      sql.exec("DELETE FROM run_schema_version");
      sql.exec("INSERT INTO run_schema_version (n) VALUES (?)", RUN_MIGRATIONS.length);
    });
  }

  /**
   * Applies a note and returns the call as it now stands, or null when nothing changed.
   * Notes may arrive late or twice: a `started` never overwrites a row, `progress`
   * touches only a running row, `settled` is final.
   */
  apply(note: RunNote): RunCall | null {
    const sql = this.#storage.sql;
    if (note.kind === "progress") {
      const changed = sql.exec(
        "UPDATE calls SET total_lines = ?, total_bytes = ? WHERE tool_call_id = ? AND status = 'running' AND (total_lines != ? OR total_bytes != ?)",
        note.totalLines,
        note.totalBytes,
        note.toolCallId,
        note.totalLines,
        note.totalBytes,
      ).rowsWritten;
      return changed > 0 ? this.call(note.toolCallId) : null;
    }
    const c = note.call;
    const values = [
      c.toolCallId,
      c.turnId,
      c.tool,
      c.summary,
      c.status,
      c.createdAt,
      c.settledAt,
      c.totalLines,
      c.totalBytes,
      c.stoppedBy || c.exitCode
        ? JSON.stringify({ stoppedBy: c.stoppedBy, exitCode: c.exitCode })
        : null,
    ];
    const insert =
      "INSERT INTO calls (tool_call_id, turn_id, tool, summary, status, created_at, settled_at, total_lines, total_bytes, ending) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    const written =
      note.kind === "started"
        ? sql.exec(`${insert} ON CONFLICT (tool_call_id) DO NOTHING`, ...values).rowsWritten
        : sql.exec(
            `${insert} ON CONFLICT (tool_call_id) DO UPDATE SET status = excluded.status, settled_at = excluded.settled_at, total_lines = excluded.total_lines, total_bytes = excluded.total_bytes, ending = excluded.ending WHERE calls.status = 'running'`,
            ...values,
          ).rowsWritten;
    return written > 0 ? this.call(c.toolCallId) : null;
  }

  call(toolCallId: string): RunCall | null {
    const row = this.#storage.sql
      .exec<Row>("SELECT * FROM calls WHERE tool_call_id = ?", toolCallId)
      .toArray()[0];
    return row ? fromRow(row) : null;
  }

  /** Every call, oldest first. */
  calls(): RunCall[] {
    return this.#storage.sql
      .exec<Row>("SELECT * FROM calls ORDER BY created_at, tool_call_id")
      .toArray()
      .map(fromRow);
  }
}

function fromRow(row: Row): RunCall {
  return {
    toolCallId: row.tool_call_id,
    turnId: row.turn_id,
    tool: row.tool,
    summary: row.summary,
    status: row.status as RunCall["status"],
    createdAt: row.created_at,
    settledAt: row.settled_at,
    totalLines: row.total_lines,
    totalBytes: row.total_bytes,
    ...(row.ending ? (JSON.parse(row.ending) as Pick<RunCall, "stoppedBy" | "exitCode">) : {}),
  };
}
