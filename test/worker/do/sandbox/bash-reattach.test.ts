import { runDurableObjectAlarm } from "cloudflare:test";
import { expect, it } from "vitest";
import {
  connectSocket,
  crash,
  startRequest,
  stubFor,
  textOf,
  value,
  view,
  waitFor,
} from "../helpers.ts";

it("after a crash, bash reattaches to its still-running sandbox process: every line once, in order", async () => {
  const name = "bash-reattach";
  const command = "for i in $(seq 1 40); do echo line $i; sleep 0.05; done";
  value(await stubFor(name).start(startRequest(name, "bash", { command })));
  await waitFor("a few lines", async () =>
    textOf((await view(name)).state).includes("line 5\n") ? true : undefined,
  );
  await crash(name);
  const before = textOf((await view(name)).state);
  expect(before).toContain("line 5\n");
  expect(before).not.toContain("line 40\n");
  const sub = await connectSocket(name);
  // No live runner: the keep-alive alarm resumes the call by rejoining the same exec.
  expect(await runDurableObjectAlarm(stubFor(name))).toBe(true);
  await sub.untilEnded();
  const poll = value(await stubFor(name).result(0));
  if (poll.status !== "settled") throw new Error("not settled");
  expect(poll.result.isError).toBe(false);
  const expected = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join("");
  expect(textOf(poll.result)).toBe(expected);
  expect(sub.state?.content).toEqual(poll.result.content);
}, 30_000);
