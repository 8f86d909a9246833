import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { idleNotice } from "../../../durable-objects/invocation/idle-timeout.ts";
import { WORKER_DEFAULTS } from "../../../src/protocol/index.ts";
import { startRequest, stubFor, textOf, value, view } from "./helpers.ts";

async function alarmOf(name: string): Promise<number | null> {
  return runInDurableObject(stubFor(name), (_instance, state) => state.storage.getAlarm());
}

describe("EXTERNAL_IDLE_TIMEOUT_SECONDS", () => {
  it("names the silence in minutes or seconds", () => {
    expect(idleNotice(1_800_000)).toContain("went silent for 30 minutes");
    expect(idleNotice(60_000)).toContain("went silent for 1 minute,");
    expect(idleNotice(1000)).toContain("went silent for 1 second,");
    expect(idleNotice(90_000)).toContain("went silent for 90 seconds");
  });
});

describe("idle timeout of an external invocation (default 30 minutes)", () => {
  it("is armed at start and pushed back by every producer call", async () => {
    const name = "idle-armed";
    const before = Date.now();
    value(await stubFor(name).start(startRequest(name, "external", { name: "agent_tool" })));
    const armed = await alarmOf(name);
    expect(armed).toBeGreaterThanOrEqual(
      before + WORKER_DEFAULTS.externalIdleTimeoutSeconds * 1000,
    );
    await new Promise((r) => setTimeout(r, 5));
    value(await stubFor(name).produce([{ write: "more\n" }]));
    expect(await alarmOf(name)).toBeGreaterThan(armed ?? Number.POSITIVE_INFINITY);
  });

  it("an alarm before the deadline (at-least-once delivery) re-arms and ends nothing", async () => {
    const name = "idle-early-alarm";
    value(await stubFor(name).start(startRequest(name, "external", { name: "agent_tool" })));
    value(await stubFor(name).produce([{ write: "partial\n" }]));
    const deadline = await alarmOf(name);
    expect(await runDurableObjectAlarm(stubFor(name))).toBe(true);
    expect((await view(name)).status).toBe("running");
    expect(await alarmOf(name)).toBe(deadline);
    value(await stubFor(name).produce([{ write: "still accepted\n" }], { isError: false }));
    const poll = value(await stubFor(name).result(0));
    if (poll.status !== "settled") throw new Error("not settled");
    expect(textOf(poll.result)).toBe("partial\nstill accepted\n");
    expect(poll.result.isError).toBe(false);
  });
});
