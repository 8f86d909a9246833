/**
 * Where each reader of this invocation's output is (decision 173): `job_output` calls,
 * each named by its own toolCallId, are given consecutive line ranges. A reader that asks
 * again (a retry of the same toolCallId, or its re-execution after a restart) gets the
 * range it was given, so no line is given twice and none is skipped.
 */

import type { ReadCursor, ReadRange } from "../../src/protocol/index.ts";
import { type Outcome, ok, refusal } from "../../src/protocol/index.ts";

export class ReadCursors {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The range `reader` was given, if any, and the first line no reader was given yet. */
  cursor(reader: string): ReadCursor {
    const given = this.#sql
      .exec<{ from_line: number; to_line: number }>(
        "SELECT from_line, to_line FROM read_cursors WHERE reader = ?",
        reader,
      )
      .toArray()[0];
    const next =
      this.#sql.exec<{ last: number | null }>("SELECT MAX(to_line) AS last FROM read_cursors").one()
        .last ?? 0;
    return {
      next: next + 1,
      ...(given ? { given: { from: given.from_line, to: given.to_line } } : {}),
    };
  }

  /**
   * Gives `reader` lines `from`–`to` (an empty range when `to` is `from - 1`). Answers the
   * range it was given when it asks again; `conflict` when another reader took `from`
   * meanwhile (read the cursor again).
   */
  commit(reader: string, range: ReadRange): Outcome<ReadRange> {
    const now = this.cursor(reader);
    if (now.given) return ok(now.given);
    if (range.from !== now.next || range.to < range.from - 1) {
      return refusal(
        "conflict",
        `lines from ${now.next} are next for a new reader; read the cursor again (asked ${range.from}-${range.to})`,
      );
    }
    this.#sql.exec(
      "INSERT INTO read_cursors (reader, from_line, to_line) VALUES (?, ?, ?)",
      reader,
      range.from,
      range.to,
    );
    return ok(range);
  }
}
