import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BatchLog } from "../../../durable-objects/batch-log.ts";
import { REBASE_EVERY } from "../../../durable-objects/durable-output.ts";
import { INTERRUPTED_NOTICE, type InvocationDO } from "../../../durable-objects/invocation.ts";
import { readCheckpoint } from "../../../durable-objects/recovery.ts";
import {
  connectSocket,
  crash,
  startRequest,
  stubFor,
  textOf,
  value,
  view,
  waitFor,
} from "./helpers.ts";

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

describe("recovery after eviction", () => {
  it("rebuilds what subscribers folded, several times mid-stream: nothing lost or duplicated, at most 50 batches replayed", async () => {
    const name = "evict-many";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "t" })));
    const sub = await connectSocket(name);
    let written = 0;
    for (const burst of [37, 64, 5, 120]) {
      await produceLines(name, written + 1, burst);
      written += burst;
      await sub.converge((await view(name)).state);
      await evictDurableObject(stub);
      const replayed = await runInDurableObject(
        stub,
        (instance: InvocationDO) => instance.recovery.batches,
      );
      expect(replayed).toBeGreaterThan(0);
      expect(replayed).toBeLessThanOrEqual(REBASE_EVERY);
      const rebuilt = (await view(name)).state;
      expect(rebuilt).toEqual(sub.state);
      expect(textOf(rebuilt)).toBe(expectedLines(written));
    }
    // After the last wake-up the socket is new to this instance: it gets a base first.
    const basesBefore = sub.bases;
    await produceLines(name, written + 1, 2);
    written += 2;
    await sub.converge((await view(name)).state);
    expect(sub.bases).toBe(basesBefore + 1);
    value(await stub.produce([], { isError: false }));
    await sub.untilEnded();
    const poll = value(await stub.result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(textOf(poll.result)).toBe(expectedLines(written));
    expect(poll.result.details).toEqual({ n: written });
  });

  it("every 50th durable batch is a base, and the log keeps at most 50 batches plus the checkpoint", async () => {
    const name = "rebase";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "t" })));
    const sub = await connectSocket(name);
    await produceLines(name, 1, 130);
    await sub.converge((await view(name)).state);
    // The log's rebases are durable-only: the subscriber got one base, then deltas.
    expect(sub.bases).toBe(1);
    const rows = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec<{ seq: number; tag: string }>("SELECT seq, tag FROM batches ORDER BY seq")
        .toArray(),
    );
    const bases = rows.filter((r) => r.tag === "base").map((r) => r.seq);
    // seq 1 is the start checkpoint; then a base every 50 batches.
    expect(bases).toEqual([1, 101]);
    expect(rows.length).toBeLessThanOrEqual(REBASE_EVERY + 1);
    await evictDurableObject(stub);
    expect(await runInDurableObject(stub, (i: InvocationDO) => i.recovery.batches)).toBe(
      131 - 101 + 1,
    );
    expect(textOf((await view(name)).state)).toBe(expectedLines(130));
  });

  it("a batch over 1 MiB (two 1 MiB images) is chunked and survives eviction", async () => {
    const name = "big-batch";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "external", { name: "t" })));
    const data = "A".repeat(1024 * 1024);
    value(
      await stub.produce([
        { write: "pictures\n" },
        { image: { data, mimeType: "image/png" } },
        { image: { data, mimeType: "image/png" } },
      ]),
    );
    await stub.flushOutput();
    const parts = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec<{ parts: number; biggest: number }>(
          "SELECT MAX(parts) AS parts, MAX(LENGTH(wire)) AS biggest FROM batches",
        )
        .one(),
    );
    expect(parts.parts).toBeGreaterThanOrEqual(3);
    expect(parts.biggest).toBeLessThanOrEqual(1024 * 1024);
    const before = (await view(name)).state;
    await evictDurableObject(stub);
    expect((await view(name)).state).toEqual(before);
    expect(before.content).toHaveLength(3);
  });

  it("a tool that is not replay-safe settles after a crash with its output and an interruption notice", async () => {
    const name = "interrupted";
    const stub = stubFor(name);
    value(await stub.start(startRequest(name, "emit", { lines: 100_000, intervalMs: 5 })));
    const before = await connectSocket(name);
    await waitFor("some lines", () => (textOf(before.state).includes("5 line") ? true : undefined));
    await crash(name);
    const recovered = textOf((await view(name)).state);
    // Nothing the subscriber saw is lost, and the lines are whole and in order.
    expect(recovered.startsWith(textOf(before.state))).toBe(true);
    const count = recovered.split("\n").length - 1;
    expect(recovered).toBe(Array.from({ length: count }, (_, i) => `${i + 1} line\n`).join(""));
    const after = await connectSocket(name);
    expect(await runDurableObjectAlarm(stubFor(name))).toBe(true);
    await after.untilEnded();
    const poll = value(await stubFor(name).result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(true);
    expect(textOf(poll.result)).toBe(`${recovered}${INTERRUPTED_NOTICE}`);
    expect(after.state?.content).toEqual(poll.result.content);
    // A second (at-least-once) delivery of the alarm changes nothing.
    await runDurableObjectAlarm(stubFor(name));
    expect(value(await stubFor(name).result(0))).toEqual(poll);
  });
});

describe("memo invariant", () => {
  it("a crash between a memo and the next write neither loses nor duplicates memoised output on replay", async () => {
    const name = "memo-replay";
    value(await stubFor(name).start(startRequest(name, "steps", { steps: 6, intervalMs: 100 })));
    await waitFor("two steps", async () =>
      textOf((await view(name)).state).includes("step 2 done") ? true : undefined,
    );
    await crash(name);
    const memos = await runInDurableObject(
      stubFor(name),
      (_i, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM memos").one().n,
    );
    expect(memos).toBeGreaterThanOrEqual(2);
    expect(memos).toBeLessThan(6);
    const sub = await connectSocket(name);
    // The keep-alive alarm finds no live runner: the replay-safe tool re-executes.
    expect(await runDurableObjectAlarm(stubFor(name))).toBe(true);
    await sub.untilEnded();
    const poll = value(await stubFor(name).result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(false);
    expect(textOf(poll.result)).toBe(
      "step 1 done\nstep 2 done\nstep 3 done\nstep 4 done\nstep 5 done\nstep 6 done\n",
    );
    expect(poll.result.details).toEqual({ completed: 6 });
    expect(sub.state?.content).toEqual(poll.result.content);
  });

  it("the memo and its checkpoint commit together: the checkpoint holds exactly the memoised steps", async () => {
    const name = "memo-checkpoint";
    value(await stubFor(name).start(startRequest(name, "steps", { steps: 3, intervalMs: 150 })));
    await waitFor("step 1", async () =>
      textOf((await view(name)).state).includes("step 1 done") ? true : undefined,
    );
    await crash(name);
    const checkpoint = await runInDurableObject(stubFor(name), (_i, state) => {
      const sql = state.storage.sql;
      const seq = sql.exec<{ s: number }>("SELECT checkpoint_seq AS s FROM invocation").one().s;
      const memos = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM memos").one().n;
      return { text: textOf(readCheckpoint(new BatchLog(sql), seq)), memos };
    });
    expect(checkpoint.memos).toBeGreaterThanOrEqual(1);
    let expected = "";
    for (let n = 1; n <= checkpoint.memos; n++) expected += `step ${n} done\n`;
    expect(checkpoint.text).toBe(expected);
    await runDurableObjectAlarm(stubFor(name));
    const poll = value(await stubFor(name).result(10_000));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(textOf(poll.result)).toBe("step 1 done\nstep 2 done\nstep 3 done\n");
  });
});
