// The bound on commands running at once in one sandbox (SANDBOX_MAX_RUNNING_EXECS) and
// its line (decision 248): past the bound a new exec is accepted and waits its turn, first
// come first served, its stream saying how many are ahead; /healthz reports the load the
// Worker admits calls by; the host refuses (503 busy, Retry-After) only past twice the
// line's bound; a kill while waiting ends it unstarted.
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecLoad, ShellUpdate } from "../../../../src/protocol/index.ts";
import { execId, type Folded, fold, startTestHost, type TestHost } from "../harness.ts";

const MAX_RUNNING = 4;
const MAX_QUEUED = 10;
/** How many the host holds in line: twice the Worker's bound (exec-gate.ts RACE_ROOM). */
const HOST_LINE = 2 * MAX_QUEUED;

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost({ maxRunningExecs: MAX_RUNNING, maxQueuedExecs: MAX_QUEUED });
});
afterAll(() => host.close());

/** A command that runs until the test creates `gate` in the workspace, then prints `ran`. */
function heldBy(gate: string, mark = ""): string {
  return `${mark}until [ -e ${gate} ]; do sleep 0.05; done; echo ran`;
}

function open(gate: string): void {
  writeFileSync(path.join(host.root, gate), "");
}

async function load(): Promise<ExecLoad> {
  const res = await fetch(`${host.url}/healthz`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { execs: ExecLoad }).execs;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
}

/** POST /v1/exec by hand: the status, Retry-After, and the body read to its end. */
async function exec(
  command: string,
): Promise<{ status: number; retry: string | null; body: string }> {
  const res = await fetch(`${host.url}/v1/exec`, {
    method: "POST",
    headers: { Authorization: `Bearer ${host.token}`, "content-type": "application/json" },
    body: JSON.stringify({ execId: execId(), command }),
  });
  return { status: res.status, retry: res.headers.get("retry-after"), body: await res.text() };
}

/** An exec followed as it goes: `seen` fills while `done` waits for its exit. */
function follow(id: string, command: string): { seen: Folded; done: Promise<Folded> } {
  const seen: Folded = { updates: [], text: "", metadata: null, exit: null };
  return { seen, done: fold(host.client.exec({ execId: id, command }), seen) };
}

const queueLines = (f: Folded) =>
  f.updates.filter((u): u is Extract<ShellUpdate, { kind: "queue" }> => u.kind === "queue");

describe("exec concurrency per sandbox", () => {
  it("past the limit an exec waits its turn, says how many are ahead, then runs", async () => {
    const gate = `go-${execId()}`;
    const first = Array.from({ length: MAX_RUNNING }, () =>
      fold(host.client.exec({ execId: execId(), command: heldBy(gate) })),
    );
    await until(async () => (await load()).running === MAX_RUNNING);
    // One at a time: three sent at once may reach the host in any order.
    const waiting: Promise<Folded>[] = [];
    for (let ahead = 0; ahead < 3; ahead++) {
      waiting.push(fold(host.client.exec({ execId: execId(), command: heldBy(gate) })));
      await until(async () => (await load()).queued === ahead + 1);
    }
    expect(await load()).toEqual({
      running: MAX_RUNNING,
      queued: 3,
      maxRunning: MAX_RUNNING,
      maxQueued: MAX_QUEUED,
    });
    open(gate);
    const runs = await Promise.all([...first, ...waiting]);
    expect(runs.map((r) => r.text)).toEqual(Array(MAX_RUNNING + 3).fill("ran\n"));
    for (const r of runs.slice(0, MAX_RUNNING)) expect(queueLines(r)).toEqual([]);
    // Each waiter was told its place, and when its turn came; none was ever told a later one.
    const places = runs.slice(MAX_RUNNING).map((r) => queueLines(r).map((u) => u.ahead));
    expect(places[0]).toEqual([0, null]);
    expect(places[1]?.[0]).toBe(1);
    expect(places[2]?.[0]).toBe(2);
    for (const p of places) expect(p.at(-1)).toBeNull();
    for (const p of places) {
      const counts = p.filter((n) => n !== null);
      expect(counts).toEqual([...counts].sort((a, b) => b - a));
    }
    expect(await load()).toMatchObject({ running: 0, queued: 0 });
  });

  it("a kill while it waits ends it unstarted, and the ones behind it move up", async () => {
    const gate = `go-${execId()}`;
    const first = Array.from({ length: MAX_RUNNING }, () =>
      fold(host.client.exec({ execId: execId(), command: heldBy(gate) })),
    );
    await until(async () => (await load()).running === MAX_RUNNING);
    const victim = execId();
    const mark = `never-${victim}`;
    const killed = fold(
      host.client.exec({ execId: victim, command: heldBy(gate, `touch ${mark}; `) }),
    );
    await until(async () => (await load()).queued === 1);
    const behind = follow(execId(), heldBy(gate));
    await until(async () => (await load()).queued === 2);
    await host.client.kill(victim);
    const ended = await killed;
    expect(ended.exit).toMatchObject({
      exitCode: null,
      signal: "SIGTERM",
      error: "killed on request while it waited its turn; it never ran",
    });
    expect(queueLines(ended).map((u) => u.ahead)).toEqual([0, null]);
    expect(await load()).toMatchObject({ running: MAX_RUNNING, queued: 1 });
    await until(async () => queueLines(behind.seen).at(-1)?.ahead === 0);
    open(gate);
    const next = await behind.done;
    expect(next.text).toBe("ran\n");
    expect(queueLines(next).map((u) => u.ahead)).toEqual([1, 0, null]);
    await Promise.all(first);
    expect(existsSync(path.join(host.root, mark))).toBe(false);
  });

  it(`${MAX_RUNNING + HOST_LINE + 6} at once: ${MAX_RUNNING} run, ${HOST_LINE} wait and run, the rest are refused with 503 busy and Retry-After; /healthz answers throughout`, async () => {
    const gate = `go-${execId()}`;
    let slowestHealth = 0;
    let checking = true;
    const health = (async () => {
      while (checking) {
        const t = performance.now();
        await load();
        slowestHealth = Math.max(slowestHealth, performance.now() - t);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    let answered = 0;
    const answers = Array.from({ length: MAX_RUNNING + HOST_LINE + 6 }, () =>
      exec(heldBy(gate)).finally(() => answered++),
    );
    // The refusals answer at once, while every accepted command is still held.
    await until(async () => answered === 6 && (await load()).queued === HOST_LINE);
    expect(answered).toBe(6);
    open(gate);
    const all = await Promise.all(answers);
    checking = false;
    await health;
    const ran = all.filter((a) => a.status === 200);
    expect(ran.length).toBe(MAX_RUNNING + HOST_LINE);
    for (const a of ran) expect(a.body).toContain('"text":"ran\\n"');
    const busy = all.filter((a) => a.status !== 200);
    expect(busy.length).toBe(6);
    for (const a of busy) {
      expect(a.status).toBe(503);
      expect(a.retry).toBe("5");
      expect(JSON.parse(a.body)).toEqual({
        error: {
          code: "busy",
          message: `this sandbox runs its limit of ${MAX_RUNNING} commands at once and ${HOST_LINE} more wait their turn; the command was not started; try again in 5 s`,
        },
      });
    }
    console.log(`exec gate: slowest /healthz ${slowestHealth.toFixed(0)} ms`);
    // The Worker gives /healthz 5 s before it answers 502 at creation.
    expect(slowestHealth).toBeLessThan(5000);
  });
});
