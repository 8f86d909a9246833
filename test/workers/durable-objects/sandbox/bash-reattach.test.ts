import { expect, it } from "vitest";
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
  await resumeDue(name);
  await sub.untilEnded();
  const poll = value(await stubFor(name).result(0));
  if (poll.status !== "settled") throw new Error("not settled");
  expect(poll.result.isError).toBe(false);
  const expected = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join("");
  expect(textOf(poll.result)).toBe(expected);
  expect(sub.state?.content).toEqual(poll.result.content);
}, 30_000);

it("a cancel while no runner follows the command (after a crash) still stops its process", async () => {
  const name = "bash-cancel-unfollowed";
  const command =
    "for i in $(seq 1 200); do echo $i > tick-unfollowed; echo line $i; sleep 0.1; done";
  value(await stubFor(name).start(startRequest(name, "bash", { command })));
  await waitFor("a few lines", async () =>
    textOf((await view(name)).state).includes("line 3\n") ? true : undefined,
  );
  await crash(name);
  const cancelled = value(await stubFor(name).cancel());
  expect(cancelled).toMatchObject({ status: "settled", isError: true, cancelled: true });
  expect(textOf(cancelled.state)).toContain("line 3\n");
  // The counter file stops changing once the process group is gone.
  const check = "bash-cancel-unfollowed-check";
  const probe =
    'sleep 0.5; a=$(cat tick-unfollowed); sleep 1; b=$(cat tick-unfollowed); [ "$a" = "$b" ] && echo stopped || echo still running';
  value(await stubFor(check).start(startRequest(check, "bash", { command: probe })));
  const poll = value(await stubFor(check).result(20_000));
  if (poll.status !== "settled") throw new Error("check not settled");
  expect(textOf(poll.result)).toBe("stopped\n");
}, 30_000);
