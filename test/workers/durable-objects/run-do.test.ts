// The Run DO on its own (real SQLite storage, real sockets, real alarms): notes arriving
// late or twice, the list sent in batches at the 500-call limit, progress from the
// invocation's heartbeat, and retirement.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CALLS_PER_MESSAGE } from "../../../durable-objects/run/run.ts";
import type { RunApi, RunCall } from "../../../durable-objects/run/run-notes.ts";
import { freshId, ORIGIN, postJson } from "../worker/helpers.ts";

const runStub = (runId: string) => env.RUNS.getByName(runId) as unknown as RunApi;

function row(id: string, overrides: Partial<RunCall> = {}): RunCall {
  return {
    toolCallId: id,
    turnId: "turn",
    tool: "bash",
    summary: `echo ${id}`,
    status: "running",
    createdAt: 1_000,
    settledAt: null,
    totalLines: 0,
    totalBytes: 0,
    ...overrides,
  };
}

/** The messages a run socket sends until `synced`. */
async function firstMessages(runId: string): Promise<{ type: string; calls?: RunCall[] }[]> {
  const res = await exports.default.fetch(`${ORIGIN}/v1/runs/${runId}/socket`, {
    headers: { Upgrade: "websocket", Authorization: "Bearer test-api-token" },
  });
  const socket = res.webSocket as WebSocket;
  const messages: { type: string; calls?: RunCall[] }[] = [];
  socket.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
  socket.accept();
  for (let i = 0; i < 300 && !messages.some((m) => m.type === "synced"); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  socket.close(1000, "done");
  return messages;
}

describe("RunDO", () => {
  it("a late start never undoes a settle; a settle heals a lost start; repeats change nothing", async () => {
    const stub = runStub(freshId("run"));
    const settled = row("a", { status: "done", settledAt: 2_000, totalLines: 3, totalBytes: 6 });
    await stub.note({ kind: "settled", call: settled });
    await stub.note({ kind: "started", call: row("a") });
    await stub.note({ kind: "progress", toolCallId: "a", totalLines: 99, totalBytes: 99 });
    await stub.note({ kind: "settled", call: { ...settled, status: "error" } });
    expect(await stub.calls()).toEqual([settled]);

    await stub.note({ kind: "started", call: row("b", { createdAt: 1_500 }) });
    await stub.note({ kind: "progress", toolCallId: "b", totalLines: 7, totalBytes: 70 });
    expect((await stub.calls()).map((c) => [c.toolCallId, c.status, c.totalLines])).toEqual([
      ["a", "done", 3],
      ["b", "running", 7],
    ]);
  });

  it(`sends the list in messages of at most ${CALLS_PER_MESSAGE} calls: ${CALLS_PER_MESSAGE} is one, one more is two`, async () => {
    const at = freshId("run");
    const over = freshId("run");
    // Inside each object: 1,000 notes without 1,000 RPC round trips.
    const fill = (runId: string, extra: RunCall[]) =>
      runInDurableObject(env.RUNS.getByName(runId), async (instance) => {
        const run = instance as unknown as RunApi;
        for (let k = 0; k < CALLS_PER_MESSAGE; k++) {
          await run.note({
            kind: "started",
            call: row(`c${String(k).padStart(4, "0")}`, { createdAt: k }),
          });
        }
        for (const call of extra) await run.note({ kind: "started", call });
      });
    await fill(at, []);
    await fill(over, [row("last", { createdAt: 10_000 })]);
    const one = await firstMessages(at);
    expect(one.map((m) => [m.type, m.calls?.length])).toEqual([
      ["calls", CALLS_PER_MESSAGE],
      ["synced", undefined],
    ]);
    const two = await firstMessages(over);
    expect(two.map((m) => [m.type, m.calls?.length])).toEqual([
      ["calls", CALLS_PER_MESSAGE],
      ["calls", 1],
      ["synced", undefined],
    ]);
    expect(two[1]?.calls?.[0]?.toolCallId).toBe("last");
  });

  it("a running call's heartbeat tells the run its line count", async () => {
    const runId = freshId("run");
    const toolCallId = freshId("emit");
    const res = await postJson("/v1/invocations", {
      tool: "emit",
      args: { lines: 400, intervalMs: 20 },
      toolCallId,
      runId,
    });
    expect(res.status).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(await runDurableObjectAlarm(env.INVOCATIONS.getByName(toolCallId))).toBe(true);
    const [during] = await runStub(runId).calls();
    expect(during?.status).toBe("running");
    expect(during?.totalLines).toBeGreaterThan(0);
    expect(during?.totalLines).toBeLessThan(400);
    await postJson(`/v1/invocations/${toolCallId}/cancel`, {});
    const [after] = await runStub(runId).calls();
    expect(after?.status).toBe("cancelled");
  });

  it("retires its index once the retention period passed and no call runs", async () => {
    const runId = freshId("run");
    const stub = runStub(runId);
    await stub.note({ kind: "started", call: row("r") });
    await stub.note({ kind: "started", call: row("s") });
    await stub.note({ kind: "settled", call: row("r", { status: "done", settledAt: 2_000 }) });
    // "s" still runs: the alarm keeps the index and comes back later.
    expect(await runDurableObjectAlarm(env.RUNS.getByName(runId))).toBe(true);
    expect((await stub.calls()).length).toBe(2);
    await stub.note({ kind: "settled", call: row("s", { status: "error", settledAt: 3_000 }) });
    expect(await runDurableObjectAlarm(env.RUNS.getByName(runId))).toBe(true);
    expect(await stub.calls()).toEqual([]);
    const alarm = await runInDurableObject(env.RUNS.getByName(runId), (_i, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeNull();
  });
});
