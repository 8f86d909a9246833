// `toolwire watch --run` (bin/toolwire on Node 22) against the real Worker, Run DO and
// sandbox host: calls already in the run, then new ones as they start and settle.
import { spawn } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { TOOLWIRE_BIN } from "../support/e2e/toolwire-cli.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });

describe("toolwire watch --run", () => {
  it("prints each call of the run as it starts and settles, until Ctrl-C", async () => {
    const runId = `watch-run-${Date.now().toString(36)}`;
    const bash = (command: string) =>
      api.createInvocation({ tool: "bash", args: { command }, runId });
    const before = await bash("echo before");
    await api.result(before.id, { wait: 30 });

    const child = spawn(TOOLWIRE_BIN, ["watch", "--run", runId], {
      env: {
        PATH: process.env.PATH ?? "",
        TOOLWIRE_URL: inject("apiUrl"),
        TOOLWIRE_TOKEN: inject("apiToken"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    const seen = async (pattern: RegExp) => {
      await expect.poll(() => pattern.test(stdout), { timeout: 30_000, interval: 50 }).toBe(true);
    };
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));

    await seen(
      new RegExp(`^done +bash +${before.id}  1 line, 7 bytes, [\\d.]+ s  echo before$`, "m"),
    );
    const failing = await bash("sleep 1; echo nope; exit 2");
    await seen(new RegExp(`^running +bash +${failing.id}  sleep 1; echo nope; exit 2$`, "m"));
    await seen(new RegExp(`^error +bash +${failing.id}  1 line, 5 bytes`, "m"));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain(`[toolwire] following run ${runId}: 1 call so far; Ctrl-C to stop`);
    expect(stderr).toContain(`run ${runId}: 2 calls, 0 running, 1 done, 1 error, 0 cancelled`);
    // Each state once: the settled call seen at start has no "running" line.
    expect(stdout.split("\n").filter((l) => l.includes(before.id))).toHaveLength(1);
    expect(stdout.split("\n").filter((l) => l.includes(failing.id))).toHaveLength(2);
  });

  it("a wrong token is exit 3 with the server's words", async () => {
    const child = spawn(TOOLWIRE_BIN, ["watch", "--run", "any-run", "--token", "wrong-token"], {
      env: { PATH: process.env.PATH ?? "", TOOLWIRE_URL: inject("apiUrl") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(3);
    expect(stderr).toMatch(
      /^toolwire: Following run any-run: the bearer token is not the configured API_TOKEN\. Check TOOLWIRE_TOKEN/,
    );
  });
});
