// A bash call of a run, followed in 1 s stretches (this project's
// SANDBOX_STREAM_WINDOW_SECONDS): each alarm that starts the next stretch tells the run
// the call's line count, so the run page's count moves before the call ends.
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import type { RunApi, RunCall } from "../../../../durable-objects/run/run-notes.ts";
import { create, freshId } from "../../worker/helpers.ts";

it("a running bash call's line count reaches its run between stretches", async () => {
  const runId = freshId("run");
  const created = await create({
    tool: "bash",
    args: { command: "for i in $(seq 1 40); do echo line $i; sleep 0.1; done" },
    toolCallId: freshId("progress"),
    runId,
  });
  const run = env.RUNS.getByName(runId) as unknown as RunApi;
  let during: RunCall | undefined;
  await expect
    .poll(
      async () => {
        [during] = await run.calls();
        return during?.status === "running" && during.totalLines > 0;
      },
      { timeout: 20_000, interval: 100 },
    )
    .toBe(true);
  expect(during?.totalLines).toBeLessThan(40);
  // A progress note may carry all 40 lines before the call settles: wait for the settle.
  await expect
    .poll(async () => (await run.calls())[0]?.status, { timeout: 20_000, interval: 200 })
    .toBe("done");
  expect((await run.calls())[0]?.totalLines).toBe(40);
  expect(created.id).toBe((await run.calls())[0]?.toolCallId);
}, 45_000);
