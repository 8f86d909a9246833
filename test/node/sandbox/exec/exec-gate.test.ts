// The host's bound on commands running at once (SANDBOX_MAX_RUNNING_EXECS): past it a
// new exec queues for a bounded time, then is refused with a 503, Retry-After and a
// plain message; /healthz keeps answering.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold, startTestHost, type TestHost } from "../harness.ts";

const MAX_RUNNING = 4;
const QUEUE_MS = 1500;

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost({ maxRunningExecs: MAX_RUNNING, execQueueMs: QUEUE_MS });
});
afterAll(() => host.close());

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

describe("exec concurrency per host", () => {
  it("at the limit every command runs; one more waits for a slot and runs", async () => {
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: MAX_RUNNING + 1 }, () =>
        fold(host.client.exec({ execId: execId(), command: "sleep 0.6; echo ran" })),
      ),
    );
    expect(runs.map((r) => r.text)).toEqual(Array(MAX_RUNNING + 1).fill("ran\n"));
    // The fifth started only once one of the first four had ended.
    expect(performance.now() - started).toBeGreaterThan(1150);
  });

  it("100 concurrent commands: each runs or is refused with 503 busy and Retry-After; /healthz answers throughout", async () => {
    let slowestHealth = 0;
    let checking = true;
    const health = (async () => {
      while (checking) {
        const t = performance.now();
        expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
        slowestHealth = Math.max(slowestHealth, performance.now() - t);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => exec("sleep 0.4; echo ran")),
    );
    checking = false;
    await health;
    const ran = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(ran.length + refused.length).toBe(100);
    for (const a of ran) expect(a.body).toContain('"text":"ran\\n"');
    for (const a of refused) {
      expect(a.retry).toBe("5");
      expect(JSON.parse(a.body)).toEqual({
        error: {
          code: "busy",
          message: `this sandbox host is running its limit of ${MAX_RUNNING} commands at once (SANDBOX_MAX_RUNNING_EXECS), and none ended within 1.5 s; the command was not started; try again in 5 s`,
        },
      });
    }
    expect(ran.length).toBeGreaterThanOrEqual(MAX_RUNNING);
    expect(refused.length).toBeGreaterThan(0);
    console.log(
      `exec gate: ${ran.length} ran, ${refused.length} refused, slowest /healthz ${slowestHealth.toFixed(0)} ms`,
    );
    // The Worker gives /healthz 5 s before it answers 502 at creation.
    expect(slowestHealth).toBeLessThan(5000);
  });
});
