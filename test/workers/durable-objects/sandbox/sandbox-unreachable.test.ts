// "down" names loopback port 1, where nothing listens; "mortal" is a real host in its own process
// that the command below kills (vitest.config.ts, sandbox-host.global-setup.ts). This
// project binds SANDBOX_REJOIN_SECONDS = "2".
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../../../src/core/chord/types.ts";
import { call, expectError, freshId, postJson } from "../../worker/helpers.ts";
import { startRequest, stubFor, textOf, value } from "../helpers.ts";

describe("a sandbox host that cannot be reached when the call starts", () => {
  const cases: [string, JsonValue][] = [
    ["bash", { command: "echo hi" }],
    ["read", { path: "a.txt" }],
    ["grep", { pattern: "x" }],
    ["glob", { pattern: "*" }],
  ];
  for (const [tool, args] of cases) {
    it(`${tool}: 502 sandbox_unreachable naming the host, and nothing is left behind`, async () => {
      const toolCallId = freshId(`down-${tool}`);
      const res = await postJson("/v1/invocations", { tool, args, toolCallId, sandbox: "down" });
      const message = await expectError(res, 502, "sandbox_unreachable");
      expect(message).toContain(`sandbox "down" at http://127.0.0.1:1 is unreachable`);
      expect(message).toContain("retry with the same toolCallId");
      await expectError(await call(`/v1/invocations/${toolCallId}`), 404, "not_found");
      const stored = await runInDurableObject(stubFor(toolCallId), async (_instance, state) => ({
        alarm: await state.storage.getAlarm(),
        rows: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM invocation").one().n,
      }));
      expect(stored).toEqual({ alarm: null, rows: 0 });
    });
  }

  it("the same toolCallId succeeds once it is routed to a host that answers", async () => {
    const toolCallId = freshId("down-then-up");
    const args = { command: "echo hi" };
    const refused = await stubFor(toolCallId).start({
      ...startRequest(toolCallId, "bash", args),
      sandbox: "down",
    });
    expect(refused.ok ? null : refused.error.code).toBe("sandbox_unreachable");
    const res = await postJson("/v1/invocations", { tool: "bash", args, toolCallId });
    expect(res.status, await res.clone().text()).toBe(201);
    const poll = value(await stubFor(toolCallId).result(20_000));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(false);
    expect(textOf(poll.result)).toBe("hi\n");
  }, 30_000);
});

it("a sandbox host that dies mid-command: rejoins for SANDBOX_REJOIN_SECONDS, then fails with the output kept", async () => {
  const name = freshId("mortal");
  // The command kills its own host, whose pid the setup wrote into the workspace.
  const command = "echo one; echo two; sleep 1; kill -9 $(cat .host-pid); sleep 1; echo never";
  value(
    await stubFor(name).start({ ...startRequest(name, "bash", { command }), sandbox: "mortal" }),
  );
  const poll = value(await stubFor(name).result(30_000));
  if (poll.status !== "settled") throw new Error("not settled");
  expect(poll.result.isError).toBe(true);
  const text = textOf(poll.result);
  expect(text.startsWith("one\ntwo\n")).toBe(true);
  expect(text).not.toContain("never");
  expect(text).toContain("could not rejoin it within 2 s");
}, 40_000);
