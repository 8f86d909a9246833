/**
 * Idempotent producer calls: the `seq` of `POST /v1/invocations/:id/output`.
 *
 * A producer numbers its bodies 0, 1, 2, … The object keeps the last accepted `seq`,
 * a digest of its body and the answer it gave, in the same transaction as the batch
 * the body produced (schema.ts, tables `producer_seq` and `producer_answer`). So:
 * - the next `seq` is applied;
 * - the last accepted `seq` again, with the same body, is a retry: answered as the
 *   first time, nothing applied again (even after eviction or settle);
 * - anything else (a gap, an older `seq`, the last `seq` with another body) is a 409
 *   naming the `seq` expected.
 * A body without `seq` bypasses all of this (today's behaviour, not retry-safe).
 * See docs/decisions/110.
 */

import type {
  ApiError,
  InvocationView,
  ProducerCall,
  ProducerEnd,
} from "../../src/protocol/index.ts";
import { apiError } from "../../src/protocol/index.ts";
import { fromChunks, toChunks } from "./output/chunks.ts";

/** What a body's `seq` is, against the last accepted one. */
type SequenceCheck =
  | { kind: "next" }
  | { kind: "retry"; answer: InvocationView }
  | { kind: "refused"; error: ApiError };

/**
 * SHA-256 (hex) of a body's calls and end, to tell a retry from another body that
 * reuses a `seq`.
 * @example await bodyDigest([{ write: "a" }], undefined) // "5f2b…"
 */
export async function bodyDigest(
  calls: ProducerCall[],
  end: ProducerEnd | undefined,
): Promise<string> {
  const bytes = new TextEncoder().encode(
    JSON.stringify(end === undefined ? [calls] : [calls, end]),
  );
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The producer's sequence as stored. Synchronous SQL: `check` and `accept` run in the
 * same synchronous step as the apply they guard, so no other call can come between.
 *
 * @example
 * const seqs = new ProducerSequence(ctx.storage.sql);
 * seqs.check(0, digest); // { kind: "next" } on a fresh invocation
 */
export class ProducerSequence {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The last accepted `seq`, or null before the first sequenced body. */
  last(): { seq: number; digest: string } | null {
    return (
      this.#sql
        .exec<{ seq: number; digest: string }>("SELECT seq, digest FROM producer_seq WHERE id = 1")
        .toArray()[0] ?? null
    );
  }

  check(seq: number, digest: string): SequenceCheck {
    const last = this.last();
    const expected = last === null ? 0 : last.seq + 1;
    if (seq === expected) return { kind: "next" };
    if (last !== null && seq === last.seq) {
      if (digest === last.digest) return { kind: "retry", answer: this.#answer() };
      return refused(
        `seq ${seq} was already accepted with another body; a retry must repeat the body exactly. The next body takes seq ${expected}.`,
      );
    }
    const why = seq < expected ? "is older than the last accepted one" : "leaves a gap";
    return refused(
      `seq ${seq} ${why}: the expected seq is ${expected}. Nothing of this body was applied.`,
    );
  }

  /** Records `seq` as accepted with the answer it got. Call inside the batch's transaction. */
  accept(seq: number, digest: string, answer: InvocationView): void {
    this.#sql.exec(
      "INSERT INTO producer_seq (id, seq, digest) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, digest = excluded.digest",
      seq,
      digest,
    );
    this.#sql.exec("DELETE FROM producer_answer");
    toChunks(answer).forEach((chunk, part) => {
      this.#sql.exec("INSERT INTO producer_answer (part, data) VALUES (?, ?)", part, chunk);
    });
  }

  #answer(): InvocationView {
    const rows = this.#sql
      .exec<{ data: ArrayBuffer }>("SELECT data FROM producer_answer ORDER BY part")
      .toArray();
    return fromChunks<InvocationView>(rows.map((r) => r.data));
  }
}

function refused(message: string): SequenceCheck {
  return { kind: "refused", error: apiError("conflict", message) };
}
