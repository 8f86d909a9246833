import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold, spawnedProcesses, spawnedProcessesReach } from "../harness.ts";
import { type SandboxTestHost, startSandboxTestHost } from "./sandbox-host.ts";

let host: SandboxTestHost;
beforeAll(async () => {
  host = await startSandboxTestHost({}, 4);
});
afterAll(() => host.close());

/**
 * Prints, last, how long ago the command's process started, in seconds. An exec keeps
 * a process's start time, so a command handed to a jail started ahead is as old as
 * that jail.
 */
const AGE =
  "echo \"age $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f22 /proc/$$/stat) $(getconf CLK_TCK)\"";

function ageOf(text: string): number {
  const line = text.trim().split("\n").at(-1) ?? "";
  const [word, uptime, start, ticks] = line.split(" ");
  expect(word).toBe("age");
  return Number(uptime) - Number(start) / Number(ticks);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How long a test waits after its create: the jail started ahead is then at least this
 * old, less its own start (a second or so on a loaded host), while a jail started for
 * the command is a moment old.
 */
const WAIT_MS = 3000;
const AHEAD_AGE_S = 1.5;
const FRESH_AGE_S = 1;

describe("a sandbox's first command, in the jail started at its create (decision 276)", () => {
  it("the first command runs in the jail that waited since the create; the next one in a new jail", async () => {
    const sbx = await host.create();
    await sleep(WAIT_MS);
    expect(ageOf((await sbx.run(AGE)).text)).toBeGreaterThan(AHEAD_AGE_S);
    expect(ageOf((await sbx.run(AGE)).text)).toBeLessThan(FRESH_AGE_S);
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("the first command sees what a command started the usual way sees: folder, variables, limits, user, exit code", async () => {
    const sbx = await host.create();
    await sbx.client.write({ path: "sub/keep", content: "x" });
    await sleep(WAIT_MS);
    const probe = `pwd; echo "pid $$"; id; ulimit -a; env | sort; printenv MULTI; ls; ${AGE}; exit 7`;
    const req = {
      command: probe,
      cwd: "sub",
      env: { GREETING: "two words", MULTI: "line one\nline two", PATH: "/usr/bin:/bin" },
    };
    const first = await fold(sbx.client.exec({ execId: execId(), ...req }));
    const second = await fold(sbx.client.exec({ execId: execId(), ...req }));
    expect(ageOf(first.text)).toBeGreaterThan(AHEAD_AGE_S);
    expect(ageOf(second.text)).toBeLessThan(FRESH_AGE_S);
    const withoutAge = (text: string) => text.trim().split("\n").slice(0, -1).join("\n");
    expect(withoutAge(first.text)).toBe(withoutAge(second.text));
    expect(first.text).toContain("/workspace/sub\npid 2\nuid=1000");
    expect(first.text).toContain("GREETING=two words\n");
    expect(first.text).toContain("MULTI=line one\n");
    expect(first.text).toContain("PATH=/usr/bin:/bin\n");
    expect(first.exit?.exitCode).toBe(7);
    expect(second.exit?.exitCode).toBe(7);
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("a first command past its timeout is stopped like any other, and its jail is gone", async () => {
    const before = await spawnedProcessesReach(0);
    const sbx = await host.create();
    await sleep(WAIT_MS);
    expect(spawnedProcesses()).toBe(before + 1);
    const ran = await fold(
      sbx.client.exec({ execId: execId(), command: `${AGE}; sleep 30`, timeoutSec: 1 }),
    );
    expect(ageOf(ran.text)).toBeGreaterThan(AHEAD_AGE_S);
    expect(ran.exit?.stoppedBy).toBe("timeout");
    expect(ran.exit?.signal).toBeTruthy();
    expect(await spawnedProcessesReach(before)).toBe(before);
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("a delete before any command ends the waiting jail and frees the disk", async () => {
    const before = await spawnedProcessesReach(0);
    const sbx = await host.create();
    expect(await spawnedProcessesReach(before + 1)).toBe(before + 1);
    expect((await host.request("DELETE", `/v1/sandboxes/${sbx.id}`)).status).toBe(200);
    expect(spawnedProcesses()).toBe(before);
    const mounts = readFileSync("/proc/self/mountinfo", "utf8");
    expect(mounts).not.toContain(sbx.id);
  });

  it("a first command on a terminal starts the usual way and ends the waiting jail", async () => {
    const before = await spawnedProcessesReach(0);
    const sbx = await host.create();
    expect(await spawnedProcessesReach(before + 1)).toBe(before + 1);
    const tty = await fold(
      sbx.client.exec({ execId: execId(), command: AGE, tty: { cols: 80, rows: 24 } }),
    );
    expect(ageOf(tty.text.replaceAll("\r", ""))).toBeLessThan(FRESH_AGE_S);
    expect(await spawnedProcessesReach(before)).toBe(before);
    await sleep(WAIT_MS);
    expect(ageOf((await sbx.run(AGE)).text)).toBeLessThan(FRESH_AGE_S);
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });
});
