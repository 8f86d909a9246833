/**
 * The InvocationDO's SQLite schema and its migrations, in one place.
 *
 * `schema_version` holds one row: the number of migrations applied. A migration is
 * appended to `MIGRATIONS`, never edited once shipped; `migrate` applies the missing
 * ones in order inside one transaction.
 *
 * Tables:
 * - `invocation`: the one invocation this object holds (row id 1).
 * - `batches`: the durable output stream. One publication = one `seq`; its encoded
 *   `WireOp[]` (UTF-8 JSON) is split into `parts` rows of at most 1 MiB each.
 * - `memos`: `context.setMemo` values (JSON).
 * - `result`: the settled result, one record split into parts of at most 1 MiB.
 * - `producer_seq`, `producer_answer`: the last accepted producer `seq` and its answer.
 * - `read_cursors`: which output lines each `job_output` call (by its toolCallId) was
 *   given; the next read starts after the highest (read-cursors.ts).
 * - `stream_meta`, `stream_data`, `stream_producers`: the call's Durable Stream
 *   (../stream/stream-log.ts): its settings, its bytes by first offset, and each
 *   producer's epoch and last seq.
 * - `stream_forks`: the live forks of this stream, by name (../stream/stream-forks.ts).
 * - `typed_inputs`, `typed_reads`: what people typed into a tty call's terminal, and which
 *   of those each model read was given (../typed-inputs.ts, decision 191).
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE invocation (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     tool_call_id TEXT NOT NULL,
     tool TEXT NOT NULL,
     args TEXT NOT NULL,
     run_id TEXT NOT NULL,
     turn_id TEXT NOT NULL,
     sandbox TEXT NOT NULL,
     status TEXT NOT NULL,
     is_error INTEGER NOT NULL DEFAULT 0,
     cancelled INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     settled_at INTEGER,
     delete_at INTEGER,
     checkpoint_seq INTEGER
   );
   CREATE TABLE batches (
     seq INTEGER NOT NULL,
     part INTEGER NOT NULL,
     parts INTEGER NOT NULL,
     stream TEXT NOT NULL,
     tag TEXT NOT NULL,
     wire BLOB NOT NULL,
     PRIMARY KEY (seq, part)
   );
   CREATE INDEX batches_by_tag ON batches (tag, seq);
   CREATE TABLE memos (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE result (part INTEGER PRIMARY KEY, data BLOB NOT NULL);`,
  // 2: idempotent producer calls (producer-sequence.ts): the last accepted seq, its
  // body's digest, and the answer it got, split like `result`.
  `CREATE TABLE producer_seq (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     seq INTEGER NOT NULL,
     digest TEXT NOT NULL
   );
   CREATE TABLE producer_answer (part INTEGER PRIMARY KEY, data BLOB NOT NULL);`,
  // 3: job_output's "new since the last read" (read-cursors.ts, decision 173).
  `CREATE TABLE read_cursors (
     reader TEXT PRIMARY KEY,
     from_line INTEGER NOT NULL,
     to_line INTEGER NOT NULL
   );`,
  // 4: the Durable Stream (../stream/stream-log.ts, decision 200).
  `CREATE TABLE stream_meta (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     content_type TEXT NOT NULL,
     ttl_seconds INTEGER,
     expires_at INTEGER,
     closed INTEGER NOT NULL DEFAULT 0,
     tail INTEGER NOT NULL DEFAULT 0,
     writer_seq TEXT,
     generation TEXT NOT NULL,
     touched_at INTEGER NOT NULL
   );
   CREATE TABLE stream_data (start INTEGER PRIMARY KEY, data BLOB NOT NULL);
   CREATE TABLE stream_producers (
     producer_id TEXT PRIMARY KEY,
     epoch INTEGER NOT NULL,
     seq INTEGER NOT NULL
   );`,
  // 5: forks inside an append and soft delete (decision 205): each row says where its
  // append began, a fork remembers its source, a source its live forks and whether it
  // was deleted while they lived.
  `ALTER TABLE stream_data ADD COLUMN append_start INTEGER NOT NULL DEFAULT 0;
   UPDATE stream_data SET append_start = start;
   CREATE INDEX stream_data_by_append ON stream_data (append_start, start);
   ALTER TABLE stream_meta ADD COLUMN fork_of TEXT;
   ALTER TABLE stream_meta ADD COLUMN fork_generation TEXT;
   ALTER TABLE stream_meta ADD COLUMN fork_offset INTEGER;
   ALTER TABLE stream_meta ADD COLUMN fork_sub_offset INTEGER;
   ALTER TABLE stream_meta ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE stream_forks (name TEXT PRIMARY KEY, generation TEXT NOT NULL);`,
  // 6: what people typed into a tty call's terminal (decision 191).
  `CREATE TABLE typed_inputs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     by TEXT NOT NULL,
     bytes INTEGER NOT NULL
   );
   CREATE TABLE typed_reads (
     reader TEXT PRIMARY KEY,
     from_seq INTEGER NOT NULL,
     to_seq INTEGER NOT NULL
   );`,
];

/**
 * Brings the database up to the latest schema; a no-op when it already is.
 *
 * @example
 * migrate(ctx.storage); // in the constructor: synchronous SQL, done before any event is delivered
 */
export function migrate(storage: DurableObjectStorage): void {
  const sql = storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = sql.exec<{ version: number }>("SELECT version FROM schema_version").toArray()[0];
  const current = row?.version ?? 0;
  if (current >= MIGRATIONS.length) return;
  storage.transactionSync(() => {
    for (const migration of MIGRATIONS.slice(current)) sql.exec(migration);
    sql.exec("DELETE FROM schema_version");
    sql.exec("INSERT INTO schema_version (version) VALUES (?)", MIGRATIONS.length);
  });
}
