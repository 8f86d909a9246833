// Background jobs survive DO eviction: the job's own object (its bash rejoined by the
// alarm) and the read cursor job_output keeps in it. This project binds
// SANDBOX_STREAM_WINDOW_SECONDS = "1", so an eviction waits at most a second.
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { expect, it } from "vitest";
import { startRequest, stubFor, textOf, value, view, waitFor } from "../helpers.ts";

/** Runs job_output as invocation `reader` (or joins it: a retry) and returns its text. */
async function jobOutput(reader: string, id: string, wait = 0): Promise<string> {
  value(await stubFor(reader).start(startRequest(reader, "job_output", { id, wait })));
  const poll = value(await stubFor(reader).result(30_000));
  if (poll.status !== "settled") throw new Error(`${reader} did not settle`);
  expect(poll.result.isError).toBe(false);
  return textOf(poll.result);
}

/**
 * The output lines of a job_output answer: its last line is the footer, and a running
 * job's answer also says whether it waits for input (docs/steering.md), which is not output.
 */
const linesOf = (answer: string) =>
  answer
    .split("\n")
    .slice(0, -1)
    .filter((line) => !/^\[(not )?waiting for input/.test(line));

it("evicted between reads: the job runs on, a retried reader is answered the same, and no line is given twice or skipped", async () => {
  const job = "bg-evict-job";
  const total = 40;
  const command = `for i in $(seq 1 ${total}); do echo $i; sleep 0.1; done`;
  value(await stubFor(job).start(startRequest(job, "bash", { command, background: true })));
  const got: string[] = [];
  let reads = 0;
  for (;;) {
    const reader = `bg-evict-read-${++reads}`;
    const answer = await jobOutput(reader, job, 1);
    // Evict both the job and the reader, then retry the same reader: the same answer.
    await evictDurableObject(stubFor(job));
    await evictDurableObject(stubFor(reader));
    expect(await jobOutput(reader, job, 1)).toBe(answer);
    got.push(...linesOf(answer));
    if (answer.includes("that is all of its output")) break;
    await runDurableObjectAlarm(stubFor(job));
    expect(reads).toBeLessThan(200);
  }
  expect(got).toEqual(Array.from({ length: total }, (_, i) => String(i + 1)));
  expect(reads).toBeGreaterThan(1);
  expect((await view(job)).status).toBe("settled");
  // jobs lists it in its run's jobs index, ended.
  const list = "bg-evict-jobs";
  value(await stubFor(list).start(startRequest(list, "jobs", {})));
  const listed = value(await stubFor(list).result(10_000));
  if (listed.status !== "settled") throw new Error("jobs did not settle");
  expect(textOf(listed.result)).toMatch(new RegExp(`^${job}  done  40 lines`, "m"));
}, 60_000);

it("kill stops a background job between stretches and keeps its output", async () => {
  const job = "bg-evict-kill";
  value(
    await stubFor(job).start(
      startRequest(job, "bash", { command: "echo up; sleep 60", background: true }),
    ),
  );
  await waitFor("up", async () => (textOf((await view(job)).state) === "up\n" ? true : undefined));
  await evictDurableObject(stubFor(job));
  const killer = "bg-evict-killer";
  value(await stubFor(killer).start(startRequest(killer, "kill", { id: job })));
  const poll = value(await stubFor(killer).result(30_000));
  if (poll.status !== "settled") throw new Error("kill did not settle");
  expect(textOf(poll.result)).toMatch(/^up\n/);
  expect(textOf(poll.result)).toContain(`[job ${job} killed; its output is kept]`);
  expect((await view(job)).cancelled).toBe(true);
}, 60_000);
