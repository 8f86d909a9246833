// This project binds SANDBOX_STREAM_WINDOW_SECONDS = "1": the DO lets go of the exec
// stream every second and its alarm rejoins, so an eviction waits at most that long.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { connectSocket, startRequest, stubFor, textOf, value, view, waitFor } from "../helpers.ts";

const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

/** The highest `line N` in the invocation's current text. */
async function lastLine(name: string): Promise<number> {
  const numbers = [...textOf((await view(name)).state).matchAll(/line (\d+)\n/g)];
  return Number(numbers.at(-1)?.[1] ?? 0);
}

/** Marks the live instance, or tells whether the live instance carries the mark. */
async function mark(name: string, set: boolean): Promise<boolean> {
  return runInDurableObject(stubFor(name), (instance) => {
    const marked = instance as unknown as { evictionMark?: true };
    if (set) marked.evictionMark = true;
    return marked.evictionMark === true;
  });
}

async function untilLine(name: string, n: number): Promise<void> {
  await waitFor(`line ${n}`, async () => ((await lastLine(name)) >= n ? true : undefined), 20_000);
}

it("evicted while bash keeps printing (three times): the alarm rejoins, every line once, in order", async () => {
  const name = "bash-evict";
  const total = 80;
  const command = `for i in $(seq 1 ${total}); do echo line $i; sleep 0.1; done`;
  value(await stubFor(name).start(startRequest(name, "bash", { command })));
  // Connected before the evictions: its socket hibernates and wakes with a fresh base.
  const early = await connectSocket(name);
  const seen: number[] = [];
  for (const at of [5, 25, 45]) {
    await untilLine(name, at);
    await mark(name, true);
    await evictDurableObject(stubFor(name));
    // A fresh instance, rebuilt from the batch log; the command is still running.
    expect(await mark(name, false)).toBe(false);
    const rebuilt = await view(name);
    expect(rebuilt.status).toBe("running");
    const text = textOf(rebuilt.state);
    const last = await lastLine(name);
    expect(text).toBe(lines(1, last));
    seen.push(last);
    // The alarm due now starts the next stretch (it may already have run by itself).
    await runDurableObjectAlarm(stubFor(name));
  }
  expect(seen.every((n) => n < total)).toBe(true);
  const sub = await connectSocket(name);
  await waitFor(
    "settled",
    async () => ((await view(name)).status === "settled" ? true : undefined),
    30_000,
  );
  const poll = value(await stubFor(name).result(0));
  if (poll.status !== "settled") throw new Error("not settled");
  expect(poll.result.isError).toBe(false);
  expect(textOf(poll.result)).toBe(lines(1, total));
  for (const subscriber of [sub, early]) {
    await subscriber.untilEnded();
    expect(subscriber.state?.content).toEqual(poll.result.content);
  }
}, 60_000);

it("evicted while bash prints past its window: the tail, the footer and the spill are exact", async () => {
  const name = "bash-evict-spill";
  const total = 3000;
  // 3000 lines in bursts of 100 with pauses: about 9 s, past the 2000-line window.
  const command = `for i in $(seq 1 ${total}); do echo line $i; [ $((i % 100)) -eq 0 ] && sleep 0.3; done; true`;
  value(await stubFor(name).start(startRequest(name, "bash", { command })));
  for (const at of [1000, 2000]) {
    await untilLine(name, at);
    await mark(name, true);
    await evictDurableObject(stubFor(name));
    expect(await mark(name, false)).toBe(false);
    expect((await view(name)).status).toBe("running");
    await runDurableObjectAlarm(stubFor(name));
  }
  await waitFor(
    "settled",
    async () => ((await view(name)).status === "settled" ? true : undefined),
    30_000,
  );
  const poll = value(await stubFor(name).result(0));
  if (poll.status !== "settled") throw new Error("not settled");
  expect(poll.result.isError).toBe(false);
  const spillPath = poll.result.truncation.spillPath;
  if (!spillPath) throw new Error("no spill path");
  expect(textOf(poll.result)).toBe(
    `${lines(total - 1999, total)}\n[Showing lines 1,001–3,000 of 3,000. Full output: ${spillPath}]` +
      `\n[To see lines 1–1,000: read {"path":"${spillPath}","offset":1,"limit":1000}; to search it, grep {"path":"${spillPath}"}]`,
  );
  // The spill holds the complete output once: compare it on the host with a fresh copy.
  const check = "bash-evict-spill-check";
  const compare = `for i in $(seq 1 ${total}); do echo line $i; done | cmp - '${spillPath}' && echo identical`;
  value(await stubFor(check).start(startRequest(check, "bash", { command: compare })));
  const checked = value(await stubFor(check).result(20_000));
  if (checked.status !== "settled") throw new Error("check not settled");
  expect(textOf(checked.result)).toBe("identical\n");
}, 60_000);
