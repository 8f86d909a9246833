import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BatchLog } from "../../../durable-objects/invocation/output/batch-log.ts";
import { REBASE_EVERY } from "../../../durable-objects/invocation/output/durable-output.ts";
import { readCheckpoint } from "../../../durable-objects/invocation/output/recovery.ts";
import { INTERRUPTED_NOTICE } from "../../../durable-objects/invocation/settle-table.ts";
import type { TestInvocationDO as InvocationDO } from "../test-invocation-do.ts";
import {
  connectSocket,
  crash,
  resumeDue,
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
    // The instance the subscriber woke holds a running call and no run: its resume is
    // due at once, not at the next heartbeat, so the call settles with no alarm run here.
    const after = await connectSocket(name);
    await after.untilEnded();
    const poll = value(await stubFor(name).result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(true);
    expect(textOf(poll.result)).toBe(`${recovered}${INTERRUPTED_NOTICE}`);
    expect(after.state?.content).toEqual(poll.result.content);
    // A second (at-least-once) delivery of the alarm changes nothing.
    await resumeDue(name);
    expect(value(await stubFor(name).result(0))).toEqual(poll);
  });
});

const SIX_STEPS = "step 1 done\nstep 2 done\nstep 3 done\nstep 4 done\nstep 5 done\nstep 6 done\n";

/** The hooks that halted a run, by the key they were made with (they run in this isolate). */
const halted = new Set<string>();

/** A memo hook that halts the run at memo `step:<at>`, `when` it is written, noting `key`. */
function haltAt(key: string, at: number, when: "before" | "after", first?: () => void) {
  return (memo: string, moment: "before" | "after") => {
    if (memo !== `step:${at}` || moment !== when) return undefined;
    first?.();
    halted.add(key);
    return "halt" as const;
  };
}

/**
 * Starts `steps` (6 steps, no pauses) with the DO's memo hook set to halt the run at
 * memo `step:<at>`, `when` it is written: the run stops there as a crash would leave it,
 * so the crash that follows hits exactly that point, whatever the timing (the steps run
 * inside `start`, so it has halted when `start` answers).
 */
async function startHaltingAt(
  name: string,
  at: number,
  when: "before" | "after",
  publishFirst = false,
): Promise<void> {
  const stub = stubFor(name);
  await runInDurableObject(stub, (instance: InvocationDO) => {
    instance.memoHook = haltAt(
      name,
      at,
      when,
      publishFirst ? () => instance.flushOutput() : undefined,
    );
  });
  value(await stub.start(startRequest(name, "steps", { steps: 6 })));
}

/** Memos stored, and the text of the checkpoint a replay starts from. */
async function durableMemos(name: string): Promise<{ memos: string[]; checkpoint: string }> {
  return runInDurableObject(stubFor(name), (_i, state) => {
    const sql = state.storage.sql;
    const seq = sql.exec<{ s: number }>("SELECT checkpoint_seq AS s FROM invocation").one().s;
    const memos = sql
      .exec<{ name: string }>("SELECT name FROM memos ORDER BY name")
      .toArray()
      .map((r) => r.name);
    return { memos, checkpoint: textOf(readCheckpoint(new BatchLog(sql), seq)) };
  });
}

/** Crashes `name`, lets the keep-alive alarm replay it, and returns the settled text. */
async function crashAndReplay(name: string): Promise<string> {
  await crash(name);
  const sub = await connectSocket(name);
  // The keep-alive alarm finds no live runner: the replay-safe tool re-executes.
  await resumeDue(name);
  await sub.untilEnded();
  const poll = value(await stubFor(name).result(0));
  if (poll.status !== "settled") throw new Error("not settled");
  expect(poll.result.isError).toBe(false);
  expect(poll.result.details).toEqual({ completed: 6 });
  expect(sub.state?.content).toEqual(poll.result.content);
  return textOf(poll.result);
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe("memo invariant", () => {
  it("a crash right after a memo commits (before the next write): the memoised step's output once, no step lost", async () => {
    const name = "memo-after";
    await startHaltingAt(name, 3, "after");
    const stored = await durableMemos(name);
    expect(stored.memos).toEqual(["step:1", "step:2", "step:3"]);
    expect(stored.checkpoint).toBe("step 1 done\nstep 2 done\nstep 3 done\n");
    expect(textOf((await view(name)).state)).toBe(stored.checkpoint);
    const text = await crashAndReplay(name);
    expect(text).toBe(SIX_STEPS);
    expect(occurrences(text, "step 3 done")).toBe(1);
  });

  it("a crash right before a memo (its step's output written and published, not memoised): the step runs again, its output once", async () => {
    const name = "memo-before";
    await startHaltingAt(name, 3, "before", true);
    const stored = await durableMemos(name);
    expect(stored.memos).toEqual(["step:1", "step:2"]);
    expect(stored.checkpoint).toBe("step 1 done\nstep 2 done\n");
    // Subscribers already saw step 3: the durable state holds it, the checkpoint does not.
    expect(textOf((await view(name)).state)).toBe("step 1 done\nstep 2 done\nstep 3 done\n");
    const text = await crashAndReplay(name);
    expect(text).toBe(SIX_STEPS);
    expect(occurrences(text, "step 3 done")).toBe(1);
  });

  it("a crash before the first memo replays from the start checkpoint: every step once", async () => {
    const name = "memo-before-first";
    await startHaltingAt(name, 1, "before");
    expect(await durableMemos(name)).toEqual({ memos: [], checkpoint: "" });
    expect(await crashAndReplay(name)).toBe(SIX_STEPS);
  });
});

/**
 * Sets the (new) instance's memo hook to halt at memo `step:<at>`, `when` it is written;
 * `halted` then holds `<name> again`.
 */
async function haltAgainAt(name: string, at: number, when: "before" | "after"): Promise<void> {
  await runInDurableObject(stubFor(name), (instance: InvocationDO) => {
    instance.memoHook = haltAt(`${name} again`, at, when);
  });
}

describe("a call that every restart cuts off (decision 245)", () => {
  it("runs again once from a checkpoint; cut off there again, it settles with an error instead of a third run", async () => {
    const name = "replay-loop";
    await startHaltingAt(name, 3, "before");
    await crash(name);
    await haltAgainAt(name, 3, "before");
    await resumeDue(name);
    // The runtime may have begun the resume on its own, and `resumeDue` then returns
    // before it ran: the crash must come after the replay was counted and cut off.
    await waitFor("the replay to halt at step:3", () =>
      halted.has(`${name} again`) ? true : undefined,
    );
    expect(value(await stubFor(name).result(0)).status).toBe("running");
    await crash(name);
    const sub = await connectSocket(name);
    await resumeDue(name);
    await sub.untilEnded();
    const poll = value(await stubFor(name).result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(true);
    expect(textOf(poll.result)).toMatch(
      /^step 1 done\nstep 2 done\n(step 3 done\n)?[\s\S]*steps was cut off by a restart twice at the same point and is not run a third time/,
    );
    expect(occurrences(textOf(poll.result), "step 4 done")).toBe(0);
  });

  it("a call that checkpointed between restarts runs again each time, to the end", async () => {
    const name = "replay-progress";
    await startHaltingAt(name, 2, "after");
    await crash(name);
    await haltAgainAt(name, 4, "after");
    await resumeDue(name);
    // The replay runs on after the alarm returns; it halts once step 4's memo commits.
    await waitFor("step 4's memo", async () =>
      (await durableMemos(name)).memos.length === 4 ? true : undefined,
    );
    expect(await durableMemos(name)).toMatchObject({
      memos: ["step:1", "step:2", "step:3", "step:4"],
    });
    expect(await crashAndReplay(name)).toBe(SIX_STEPS);
  });
});
