import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BatchLog } from "../../../durable-objects/invocation/output/batch-log.ts";
import { toChunks } from "../../../durable-objects/invocation/output/chunks.ts";
import { migrate } from "../../../durable-objects/invocation/output/schema.ts";
import { decoder } from "../../../src/core/chord/index.ts";
import { legacyEncoder } from "../../support/legacy-encoder.ts";
import type { TestInvocationDO as InvocationDO } from "../test-invocation-do.ts";
import { connectSocket, startRequest, stubFor, textOf, value, view } from "./helpers.ts";

/**
 * Batch logs written before the wire became the reference Chord's (docs/decisions/008)
 * hold a path's definition inside an op's path slot. They must stay readable: the
 * object recovers from them after an eviction as from any log.
 */

async function produceLines(name: string, from: number, n: number): Promise<void> {
  const stub = stubFor(name);
  for (let i = from; i < from + n; i++) {
    value(await stub.produce([{ write: `line ${i}\n` }, { details: [["s", ["n"], i]] }]));
    await stub.flushOutput();
  }
}

function expectedLines(n: number): string {
  let text = "";
  for (let i = 1; i <= n; i++) text += `line ${i}\n`;
  return text;
}

/** A stored op whose path slot holds the first form's definition. */
const isLegacyOp = (w: unknown): boolean =>
  Array.isArray(w) && Array.isArray(w[1]) && w[1][0] === "#" && Array.isArray(w[1][2]);

/**
 * Rewrites every stored batch of `sql` as the first encoder wrote it (one encoder in
 * seq order, as the object kept it), and returns how many rows hold a definition in a
 * path slot and how many a "#" op of their own.
 */
function rewriteInFirstForm(sql: SqlStorage): { legacyOps: number; defineOps: number } {
  const log = new BatchLog(sql);
  const seqs = sql
    .exec<{ seq: number }>("SELECT DISTINCT seq FROM batches ORDER BY seq")
    .toArray()
    .map((row) => row.seq);
  const dec = decoder();
  const enc = legacyEncoder();
  let legacyOps = 0;
  let defineOps = 0;
  for (const seq of seqs) {
    const batch = log.read(seq);
    if (!batch) throw new Error(`batch ${seq} is missing`);
    const legacy = enc.encode(dec.decode(batch.wire));
    sql.exec("DELETE FROM batches WHERE seq = ?", seq);
    const chunks = toChunks(legacy);
    chunks.forEach((chunk, part) => {
      sql.exec(
        "INSERT INTO batches (seq, part, parts, stream, tag, wire) VALUES (?, ?, ?, ?, ?, ?)",
        seq,
        part,
        chunks.length,
        "output",
        batch.tag,
        chunk,
      );
    });
  }
  for (const row of sql.exec<{ wire: ArrayBuffer }>("SELECT wire FROM batches").toArray()) {
    const ops = JSON.parse(new TextDecoder().decode(row.wire)) as unknown[][];
    legacyOps += ops.filter(isLegacyOp).length;
    defineOps += ops.filter((w) => w[0] === "#").length;
  }
  return { legacyOps, defineOps };
}

describe("a batch log in the first wire form", () => {
  it("reads back in today's form, row by row", async () => {
    const read = await runInDurableObject(stubFor("legacy-rows"), (_i, state) => {
      migrate(state.storage);
      const sql = state.storage.sql;
      const stored = [
        [["r", { text: "", n: 0 }]],
        [["a", ["text"], "a"]],
        [
          ["a", ["#", 0, ["text"]], "b"],
          ["s", ["n"], 1],
        ],
        [
          ["a", 0, "c"],
          ["s", ["#", 1, ["n"]], 2],
        ],
      ];
      stored.forEach((wire, i) => {
        sql.exec(
          "INSERT INTO batches (seq, part, parts, stream, tag, wire) VALUES (?, 0, 1, 'output', ?, ?)",
          i + 1,
          i === 0 ? "base" : "delta",
          toChunks(wire)[0] as ArrayBuffer,
        );
      });
      return new BatchLog(sql).readFromLastBase().map((b) => b.wire);
    });
    expect(read).toEqual([
      [["r", { text: "", n: 0 }]],
      [["a", ["text"], "a"]],
      [
        ["#", 0, ["text"]],
        ["a", 0, "b"],
        ["s", ["n"], 1],
      ],
      [
        ["a", 0, "c"],
        ["#", 1, ["n"]],
        ["s", 1, 2],
      ],
    ]);
  });

  it("recovers after eviction to what subscribers had folded, and the run goes on to settle", async () => {
    const name = "legacy-log";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "t" })));
    const sub = await connectSocket(name);
    await produceLines(name, 1, 30);
    const before = (await view(name)).state;
    await sub.converge(before);

    const form = await runInDurableObject(stub, (_i, state) =>
      rewriteInFirstForm(state.storage.sql),
    );
    // The log really is in the first form: definitions in path slots, no "#" op.
    expect(form.legacyOps).toBeGreaterThan(0);
    expect(form.defineOps).toBe(0);

    await evictDurableObject(stub);
    const replayed = await runInDurableObject(stub, (i: InvocationDO) => i.recovery.batches);
    expect(replayed).toBeGreaterThan(1);
    const rebuilt = (await view(name)).state;
    expect(rebuilt).toEqual(before);
    expect(textOf(rebuilt)).toBe(expectedLines(30));

    await produceLines(name, 31, 5);
    await sub.converge((await view(name)).state);
    value(await stub.produce([], { isError: false }));
    await sub.untilEnded();
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(textOf(poll.result)).toBe(expectedLines(35));
    expect(poll.result.details).toEqual({ n: 35 });
  });
});
