// This project binds EXTERNAL_IDLE_TIMEOUT_SECONDS = "2" (vitest.config.ts), so the
// deadline passes within the test.
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { expect, it } from "vitest";
import { IDLE_NOTICE_PREFIX } from "../../../../durable-objects/invocation/idle-timeout.ts";
import { connectSocket, startRequest, stubFor, textOf, value, view, waitFor } from "../helpers.ts";

const TIMEOUT_MS = 2000;

async function settledAfterDeadline(name: string, lastCallAt: number) {
  await waitFor(
    "the idle deadline to pass",
    () => (Date.now() > lastCallAt + TIMEOUT_MS ? true : undefined),
    TIMEOUT_MS + 5000,
  );
  // The alarm may already have fired by itself (running it again is a no-op then), or,
  // on a loaded machine, be due a moment after this isolate's clock says the deadline
  // passed: run it until the call has settled, a few seconds at most.
  return waitFor(
    "the call to settle at its idle deadline",
    async () => {
      await runDurableObjectAlarm(stubFor(name));
      const poll = value(await stubFor(name).result(0));
      return poll.status === "settled" ? poll.result : undefined;
    },
    5000,
  );
}

it("an external invocation whose producer goes silent ends as an error, output kept, with a notice", async () => {
  const name = "idle-silent";
  value(await stubFor(name).start(startRequest(name, "external", { name: "agent_tool" })));
  value(
    await stubFor(name).produce([{ write: "step 1 done\n" }, { details: [["s", ["step"], 1]] }]),
  );
  const lastCallAt = Date.now();
  const sub = await connectSocket(name);
  const result = await settledAfterDeadline(name, lastCallAt);
  expect(result.isError).toBe(true);
  expect(textOf(result).startsWith("step 1 done\n")).toBe(true);
  expect(textOf(result)).toContain(`${IDLE_NOTICE_PREFIX} for 2 seconds`);
  expect(result.details).toEqual({ step: 1 });
  await sub.untilEnded();
  expect(sub.state?.content).toEqual(result.content);
  const refused = await stubFor(name).produce([{ write: "too late\n" }]);
  expect(refused.ok).toBe(false);
  expect(textOf((await view(name)).state)).not.toContain("too late");
}, 20_000);

it("after an eviction the alarm still ends a silent producer's invocation", async () => {
  const name = "idle-evicted";
  value(await stubFor(name).start(startRequest(name, "external", { name: "agent_tool" })));
  value(await stubFor(name).produce([{ write: "before eviction\n" }]));
  await stubFor(name).flushOutput();
  const lastCallAt = Date.now();
  await evictDurableObject(stubFor(name));
  const result = await settledAfterDeadline(name, lastCallAt);
  expect(result.isError).toBe(true);
  expect(textOf(result).startsWith("before eviction\n")).toBe(true);
  expect(textOf(result)).toContain(IDLE_NOTICE_PREFIX);
}, 20_000);
