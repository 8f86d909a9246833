/**
 * What people typed into this call's terminal (decision 191), for the model: each input
 * a person sent through the Worker's terminal route is kept, and a model read
 * (`job_output`, `write_stdin`, each by its own toolCallId) is given those since the
 * last read, once. A reader that asks again (a retry of its toolCallId) gets the same
 * ones, as read-cursors.ts does for lines. The model's own inputs are not kept here:
 * it knows what it typed.
 */
import { type Outcome, ok, type TypedInput } from "../../src/protocol/index.ts";

/** Inputs kept at most; past it the oldest go (a model read then says fewer). */
const KEPT_INPUTS = 1000;

export class TypedInputs {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Keeps a person's input. */
  add(input: TypedInput): void {
    this.#sql.exec(
      "INSERT INTO typed_inputs (at, by, bytes) VALUES (?, ?, ?)",
      input.at,
      input.by,
      input.bytes,
    );
    this.#sql.exec(
      "DELETE FROM typed_inputs WHERE seq <= (SELECT MAX(seq) FROM typed_inputs) - ?",
      KEPT_INPUTS,
    );
  }

  /** The inputs `reader` is given: those after every earlier reader's, or its own again. */
  since(reader: string): Outcome<TypedInput[]> {
    const given = this.#sql
      .exec<{ from_seq: number; to_seq: number }>(
        "SELECT from_seq, to_seq FROM typed_reads WHERE reader = ?",
        reader,
      )
      .toArray()[0];
    let range = given;
    if (!range) {
      const last =
        this.#sql.exec<{ last: number | null }>("SELECT MAX(to_seq) AS last FROM typed_reads").one()
          .last ?? 0;
      const newest =
        this.#sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM typed_inputs").one()
          .seq ?? 0;
      range = { from_seq: last + 1, to_seq: Math.max(last, newest) };
      this.#sql.exec(
        "INSERT INTO typed_reads (reader, from_seq, to_seq) VALUES (?, ?, ?)",
        reader,
        range.from_seq,
        range.to_seq,
      );
    }
    const rows = this.#sql
      .exec<{ at: number; by: string; bytes: number }>(
        "SELECT at, by, bytes FROM typed_inputs WHERE seq BETWEEN ? AND ? ORDER BY seq",
        range.from_seq,
        range.to_seq,
      )
      .toArray();
    return ok(rows.map((r) => ({ at: r.at, by: r.by, bytes: r.bytes })));
  }
}
