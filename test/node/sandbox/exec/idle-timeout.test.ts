import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold, startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(async () => {
  await host?.close();
});

describe("exec: idleTimeoutSec stops a command only after that long without output", () => {
  it("a command that prints every 0.2 s for 2 s under idleTimeoutSec 0.6 runs to its end", async () => {
    const f = await fold(
      host.client.exec({
        execId: execId(),
        command: "for i in $(seq 1 10); do echo $i; sleep 0.2; done",
        idleTimeoutSec: 0.6,
      }),
    );
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(f.text).toBe(`${Array.from({ length: 10 }, (_, i) => i + 1).join("\n")}\n`);
  });

  it("a command that goes silent is stopped by idleTimeout, its output kept, and says so", async () => {
    const f = await fold(
      host.client.exec({
        execId: execId(),
        command: "echo before; sleep 30; echo after",
        idleTimeoutSec: 0.5,
        timeoutSec: 20,
      }),
    );
    expect(f.text).toBe("before\n");
    expect(f.exit?.stoppedBy).toBe("idleTimeout");
    expect(f.exit?.error).toMatch(/timed out after 0.5 s \(idle\): no output for that long/);
    expect(f.exit?.exitCode).toBeNull();
  });

  it("the wall-clock timeout stays the hard limit over a command that keeps printing", async () => {
    const f = await fold(
      host.client.exec({
        execId: execId(),
        command: "while :; do echo tick; sleep 0.1; done",
        idleTimeoutSec: 5,
        timeoutSec: 0.6,
      }),
    );
    expect(f.exit?.stoppedBy).toBe("timeout");
    expect(f.exit?.error).toMatch(/timed out after 0.6 s \(timeout\)/);
    expect(f.text.startsWith("tick\n")).toBe(true);
  });

  it("a command that exits by itself names no limit", async () => {
    const f = await fold(
      host.client.exec({ execId: execId(), command: "exit 3", idleTimeoutSec: 5, timeoutSec: 5 }),
    );
    expect(f.exit).toEqual({ kind: "exit", exitCode: 3 });
  });

  it("refuses an idleTimeoutSec that is not positive or over a day", async () => {
    for (const idleTimeoutSec of [0, -1, 86_401]) {
      await expect(
        fold(host.client.exec({ execId: execId(), command: "true", idleTimeoutSec })),
      ).rejects.toThrow(/idleTimeoutSec/);
    }
  });
});
