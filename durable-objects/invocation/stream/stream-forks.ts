/**
 * The live forks of this object's stream, by name and the generation each was made in
 * (table `stream_forks`, decision 205). A source with live forks is soft-deleted instead
 * of deleted; the last fork's going frees it.
 */
export class StreamForks {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** `name` (made as `generation`) forked this stream; again is a no-op. */
  add(name: string, generation: string): void {
    this.#sql.exec(
      "INSERT INTO stream_forks (name, generation) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET generation = excluded.generation",
      name,
      generation,
    );
  }

  /** `name`'s making `generation` is gone; another making of the same name is kept. */
  remove(name: string, generation: string): void {
    this.#sql.exec("DELETE FROM stream_forks WHERE name = ? AND generation = ?", name, generation);
  }

  /** Up to `limit` of the forks, in no particular order. */
  some(limit: number): { name: string; generation: string }[] {
    return this.#sql
      .exec<{ name: string; generation: string }>(
        "SELECT name, generation FROM stream_forks LIMIT ?",
        limit,
      )
      .toArray();
  }

  count(): number {
    return this.#sql.exec<{ n: number }>("SELECT count(*) AS n FROM stream_forks").one().n;
  }
}
