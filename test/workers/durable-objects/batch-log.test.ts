import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BatchLog } from "../../../durable-objects/invocation/output/batch-log.ts";
import { MAX_ROW_BYTES } from "../../../durable-objects/invocation/output/chunks.ts";
import { migrate } from "../../../durable-objects/invocation/output/schema.ts";
import type { WireOp } from "../../../src/core/chord/types.ts";
import { stubFor } from "./helpers.ts";

/** A one-op batch whose JSON is exactly `bytes` long. */
function batchOfBytes(bytes: number): WireOp[] {
  const overhead = JSON.stringify([["a", ["t"], ""]]).length;
  return [["a", ["t"], "x".repeat(bytes - overhead)]];
}

function withLog<R>(name: string, fn: (log: BatchLog, sql: SqlStorage) => R): Promise<R> {
  return runInDurableObject(stubFor(name), (_instance, state) => {
    migrate(state.storage);
    return fn(new BatchLog(state.storage.sql), state.storage.sql);
  });
}

describe("batch log chunking (1 MiB per row)", () => {
  it.each([
    ["just under 1 MiB", MAX_ROW_BYTES - 1, 1],
    ["exactly 1 MiB", MAX_ROW_BYTES, 1],
    ["just over 1 MiB", MAX_ROW_BYTES + 1, 2],
    ["over 2 MiB", 2 * MAX_ROW_BYTES + 10, 3],
  ])(
    "a batch %s is stored in the right number of rows and reads back whole",
    async (label, bytes, rows) => {
      const wire = batchOfBytes(bytes);
      expect(JSON.stringify(wire).length).toBe(bytes);
      const out = await withLog(`chunks-${label}`, (log, sql) => {
        log.append("base", [["r", { n: 1 }]]);
        const seq = log.append("delta", wire);
        const parts = sql
          .exec<{ n: number; biggest: number }>(
            "SELECT COUNT(*) AS n, MAX(LENGTH(wire)) AS biggest FROM batches WHERE seq = ?",
            seq,
          )
          .one();
        return { parts, read: log.readFromLastBase() };
      });
      expect(out.parts.n).toBe(rows);
      expect(out.parts.biggest).toBeLessThanOrEqual(MAX_ROW_BYTES);
      expect(out.read.map((b) => b.tag)).toEqual(["base", "delta"]);
      expect(out.read[1]?.wire).toEqual(wire);
    },
  );

  it("multi-byte text split across chunk boundaries reads back exactly", async () => {
    const text = "é€😀".repeat(200_000);
    const read = await withLog("chunks-utf8", (log) => {
      log.append("base", [["r", { text }]]);
      return log.readFromLastBase();
    });
    expect(read[0]?.wire).toEqual([["r", { text }]]);
  });

  it("reads from the newest base and prunes what came before it, keeping the checkpoint", async () => {
    const out = await withLog("prune", (log) => {
      const first = log.append("base", [["r", 0]]);
      log.append("delta", [["s", ["a"], 1]]);
      const second = log.append("base", [["r", 2]]);
      const after = log.append("delta", [["s", ["b"], 3]]);
      log.pruneBefore(second, first);
      return {
        first,
        second,
        after,
        batches: log.readFromLastBase(),
        checkpoint: log.read(first),
        rows: log.storedRows(),
      };
    });
    expect(out.batches.map((b) => b.seq)).toEqual([out.second, out.after]);
    expect(out.checkpoint?.wire).toEqual([["r", 0]]);
    expect(out.rows).toBe(3);
  });
});
