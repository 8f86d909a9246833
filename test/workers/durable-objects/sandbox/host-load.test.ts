// A call in a created sandbox is admitted by the load its host reported to the Worker a
// moment before (the Sandbox DO's use, decision 258): the Invocation DO does not ask the
// host again. "down" names loopback port 1, where nothing listens (vitest.config.ts), so
// a start that probed it would be a 502.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExecLoad } from "../../../../src/protocol/index.ts";
import { freshId } from "../../worker/helpers.ts";
import { startRequest, stubFor, value } from "../helpers.ts";

const rowsOf = (toolCallId: string) =>
  runInDurableObject(
    stubFor(toolCallId),
    async (_instance, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM invocation").one().n,
  );

describe("a start that carries its host's load", () => {
  const load = (queued: number): ExecLoad => ({ running: 2, queued, maxRunning: 2, maxQueued: 4 });

  it("is admitted by it without probing the host (the same start without it is a 502)", async () => {
    const probed = freshId("probed");
    const refused = await stubFor(probed).start({
      ...startRequest(probed, "bash", { command: "echo hi" }),
      sandbox: "down",
    });
    expect(refused.ok ? null : refused.error.code).toBe("sandbox_unreachable");
    const told = freshId("told");
    const started = value(
      await stubFor(told).start({
        ...startRequest(told, "bash", { command: "echo hi" }),
        sandbox: "down",
        hostLoad: load(3),
      }),
    );
    expect(started.created).toBe(true);
    // Created, then run: the command finds no host, and the call says so.
    const poll = value(await stubFor(told).result(20_000));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(poll.result.isError).toBe(true);
  });

  it("just under the line's bound it is admitted; at the bound it is a 429 with Retry-After, and nothing is kept", async () => {
    const under = freshId("under");
    expect(
      value(
        await stubFor(under).start({
          ...startRequest(under, "bash", { command: "echo hi" }),
          hostLoad: load(3),
        }),
      ).created,
    ).toBe(true);
    const full = freshId("full");
    const refused = await stubFor(full).start({
      ...startRequest(full, "bash", { command: "echo hi" }),
      hostLoad: load(4),
    });
    if (refused.ok) throw new Error("admitted past the line's bound");
    expect(refused.error.code).toBe("too_many_requests");
    expect(refused.error.retryAfterSec).toBeGreaterThan(0);
    expect(await rowsOf(full)).toBe(0);
  });
});
