import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HEARTBEAT_MS } from "../../../durable-objects/invocation/alarm-schedule.ts";
import { CANCELLED_NOTICE } from "../../../durable-objects/invocation/settle-table.ts";
import type { TestInvocationDO as InvocationDO } from "../test-invocation-do.ts";
import { crash, startRequest, stubFor, textOf, value, view, waitFor } from "./helpers.ts";

describe("start", () => {
  it("is idempotent per toolCallId: a second start returns the same invocation", async () => {
    const stub = stubFor("idem");
    const first = value(await stub.start(startRequest("idem", "emit", { lines: 2 })));
    const second = value(await stub.start(startRequest("idem", "emit", { lines: 99 })));
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.view.args).toEqual({ lines: 2 });
  });

  it("refuses an unknown tool and bad args with a clear error, storing nothing", async () => {
    const stub = stubFor("bad-start");
    const unknown = await stub.start(startRequest("bad-start", "nope", {}));
    expect(unknown).toMatchObject({ ok: false, error: { code: "bad_request", status: 400 } });
    const bad = await stub.start(startRequest("bad-start", "emit", { lines: -1 }));
    expect(bad).toMatchObject({ ok: false, error: { code: "bad_request" } });
    expect(await stub.view()).toMatchObject({
      ok: false,
      error: { code: "not_found", status: 404 },
    });
  });
});

describe("settle", () => {
  it("stores one result, deletes the batch log and memos, and long-poll returns it", async () => {
    const stub = stubFor("settle");
    value(await stub.start(startRequest("settle", "steps", { steps: 4, intervalMs: 5 })));
    const poll = value(await stub.result(10_000));
    expect(poll.status).toBe("settled");
    if (poll.status !== "settled") return;
    expect(poll.result.isError).toBe(false);
    expect(textOf(poll.result)).toBe("step 1 done\nstep 2 done\nstep 3 done\nstep 4 done\n");
    expect(poll.result.details).toEqual({ completed: 4 });
    const stats = await runInDurableObject(stub, (i: InvocationDO) => i.storageStats());
    expect(stats.batchRows).toBe(0);
    expect(stats.memos).toBe(0);
    expect(stats.resultBytes).toBeGreaterThan(0);
    const v = await view("settle");
    expect(v.status).toBe("settled");
    expect(v.state.content).toEqual(poll.result.content);
  });

  it("result without waiting answers running while the tool runs", async () => {
    const stub = stubFor("poll-running");
    value(await stub.start(startRequest("poll-running", "emit", { lines: 50, intervalMs: 20 })));
    expect(value(await stub.result(0))).toEqual({ status: "running" });
    value(await stub.cancel());
  });

  it("a thrown error sets isError and appends the error text to the partial output", async () => {
    const stub = stubFor("fails");
    value(await stub.start(startRequest("fails", "emit", { lines: 3, fail: true })));
    const poll = value(await stub.result(10_000));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(true);
    const text = textOf(poll.result);
    expect(text.startsWith("1 line\n2 line\n3 line\n")).toBe(true);
    expect(text).toContain("emit failed on purpose after 3 lines");
  });

  it("cancel aborts the tool, keeps the partial output and says it was cancelled", async () => {
    const stub = stubFor("cancel");
    value(await stub.start(startRequest("cancel", "emit", { lines: 10_000, intervalMs: 5 })));
    await waitFor("some lines", async () =>
      textOf((await view("cancel")).state).includes("3 line") ? true : undefined,
    );
    const cancelled = value(await stub.cancel());
    expect(cancelled).toMatchObject({ status: "settled", isError: true, cancelled: true });
    const text = textOf(cancelled.state);
    expect(text).toMatch(/^1 line\n2 line\n3 line\n/);
    expect(text.trimEnd().endsWith(CANCELLED_NOTICE)).toBe(true);
    expect(await stub.cancel()).toMatchObject({
      ok: false,
      error: { code: "conflict", status: 409 },
    });
  });
});

describe("example tools", () => {
  it("report fills details, accumulates usage per item, sets added tools, terminate and an image", async () => {
    const stub = stubFor("report");
    const args = {
      items: ["a", "b", "c"],
      usage: { input: 2, cost: 0.25 },
      addTools: ["deploy"],
      terminate: true,
      imageBase64: "iVBORw0KGgo=",
    };
    value(await stub.start(startRequest("report", "report", args)));
    const poll = value(await stub.result(10_000));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result).toEqual({
      content: [
        { type: "text", text: "- a\n- b\n- c\n" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ],
      details: { items: ["a", "b", "c"], count: 3 },
      usage: { input: 6, cost: 0.75 },
      addedTools: ["deploy"],
      terminate: true,
      isError: false,
      truncation: expect.objectContaining({ truncated: false, totalLines: 3, totalBytes: 12 }),
    });
  });
});

describe("keep-alive", () => {
  it("arms a heartbeat alarm while a tool runs; an alarm with a live runner only re-arms it", async () => {
    const stub = stubFor("heartbeat");
    const startedAt = Date.now();
    value(await stub.start(startRequest("heartbeat", "emit", { lines: 40, intervalMs: 25 })));
    const first = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
    expect(first).toBeGreaterThanOrEqual(startedAt + HEARTBEAT_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await view("heartbeat")).status).toBe("running");
    expect(
      await runInDurableObject(stub, (_i, state) => state.storage.getAlarm()),
    ).toBeGreaterThanOrEqual(startedAt + HEARTBEAT_MS);
    const poll = value(await stub.result(10_000));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(false);
    expect(poll.result.details).toEqual({ emitted: 40 });
  });

  it("cancel after a crash settles from the durable output with the cancellation notice", async () => {
    value(
      await stubFor("cancel-crashed").start(
        startRequest("cancel-crashed", "emit", { lines: 10_000, intervalMs: 5 }),
      ),
    );
    await waitFor("some lines", async () =>
      textOf((await view("cancel-crashed")).state).includes("3 line") ? true : undefined,
    );
    await crash("cancel-crashed");
    const recovered = textOf((await view("cancel-crashed")).state);
    const cancelled = value(await stubFor("cancel-crashed").cancel());
    expect(cancelled).toMatchObject({ status: "settled", cancelled: true, isError: true });
    expect(textOf(cancelled.state)).toBe(`${recovered}${CANCELLED_NOTICE}`);
  });
});

describe("retention", () => {
  it("the alarm deletes a settled invocation only after its retention period", async () => {
    const stub = stubFor("retire");
    value(await stub.start(startRequest("retire", "emit", { lines: 2 })));
    await waitFor("settled", async () =>
      (await view("retire")).status === "settled" ? true : undefined,
    );
    const deleteAt = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
    const settledAt = (await view("retire")).settledAt ?? 0;
    expect(deleteAt).toBe(settledAt + 7 * 86_400_000);
    // Early (at-least-once) delivery: nothing is deleted and the alarm is re-armed.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await view("retire")).status).toBe("settled");
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBe(deleteAt);
    // Past the deadline: everything goes.
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("UPDATE invocation SET delete_at = 0");
    });
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.view()).toMatchObject({ ok: false, error: { code: "not_found" } });
    const left = await runInDurableObject(
      stub,
      (_i, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM invocation").one().n,
    );
    expect(left).toBe(0);
  });
});
