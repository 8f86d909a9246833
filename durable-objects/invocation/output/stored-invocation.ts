/**
 * The invocation as this object stores it: the record, the settled result (read once,
 * then cached), the batch log, memos. Synchronous SQL (schema.ts holds the tables).
 */
import type { SettledResult } from "../../../src/core/output/index.ts";
import { newRecord } from "../fanout/views.ts";
import { BatchLog } from "./batch-log.ts";
import { migrate } from "./schema.ts";
import {
  type InvocationRecord,
  InvocationStore,
  type StorageStats,
  storageStatsOf,
} from "./store.ts";

/** What settling writes besides the result. */
type SettledMarks = Pick<InvocationRecord, "isError" | "cancelled"> & {
  settledAt: number;
  deleteAt: number;
};

/**
 * @example
 * const stored = new StoredInvocation(ctx.storage);
 * stored.record?.status; // "running" | "settled" | undefined
 */
export class StoredInvocation {
  readonly #storage: DurableObjectStorage;
  readonly store: InvocationStore;
  readonly log: BatchLog;
  #record: InvocationRecord | undefined;
  #result: SettledResult | undefined;

  /** Brings the schema up to date and loads the record. */
  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    migrate(storage);
    this.store = new InvocationStore(storage.sql);
    this.log = new BatchLog(storage.sql);
    this.#record = this.store.record();
  }

  /** The invocation this object holds, if any. */
  get record(): InvocationRecord | undefined {
    return this.#record;
  }

  /** The record; throws when this object holds none (a caller's bug, not a user's). */
  required(): InvocationRecord {
    if (!this.#record) throw new Error("This object holds no invocation.");
    return this.#record;
  }

  /** Writes the record of a call `start` creates. */
  create(req: Parameters<typeof newRecord>[0]): InvocationRecord {
    this.#record = newRecord(req, Date.now());
    this.store.insertRecord(this.#record);
    return this.#record;
  }

  /** The settled result, once settled. */
  result(): SettledResult | undefined {
    if (this.#record?.status !== "settled") return undefined;
    this.#result ??= this.store.result();
    return this.#result;
  }

  /** One transaction: the result stored, the record settled, the batch log and memos deleted. */
  settle(result: SettledResult, marks: SettledMarks): InvocationRecord {
    const record = this.required();
    this.#storage.transactionSync(() => {
      this.store.settle(result, marks);
      this.log.clear();
    });
    this.#record = { ...record, ...marks, status: "settled", checkpointSeq: null };
    this.#result = result;
    return this.#record;
  }

  /** Deletes everything; the object then holds no invocation. */
  async retire(): Promise<void> {
    await this.#storage.deleteAlarm();
    await this.#storage.deleteAll();
    migrate(this.#storage);
    this.#record = undefined;
    this.#result = undefined;
  }

  /** Storage use (tests and benchmarks). */
  stats(): StorageStats {
    return storageStatsOf(this.log, this.store);
  }
}
