import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold, markedProcesses } from "../harness.ts";
import { type SandboxTestHost, startSandboxTestHost, type TestSandbox } from "./sandbox-host.ts";

let host: SandboxTestHost;
let a: TestSandbox;
let b: TestSandbox;

beforeAll(async () => {
  host = await startSandboxTestHost();
  [a, b] = await Promise.all([host.create(), host.create()]);
  writeFileSync(path.join(b.workspace, "secret.txt"), "B's secret\n");
});
afterAll(() => host.close());

describe("two sandboxes on one host", () => {
  it("each command runs in its own workspace, and the default workspace sees neither", async () => {
    const ran = await a.run("pwd; echo from-a > mine.txt");
    expect(ran.text.trim().split("\n")[0]).toBe("/workspace");
    expect(readFileSync(path.join(a.workspace, "mine.txt"), "utf8")).toBe("from-a\n");
    expect(existsSync(path.join(b.workspace, "mine.txt"))).toBe(false);
    const inDefault = await fold(host.client.exec({ execId: execId(), command: "ls -A" }));
    expect(inDefault.text).not.toContain("mine.txt");
  });

  it("A cannot list B's workspace, nor the directory that holds every sandbox, nor its own host path", async () => {
    // A's jail holds its workspace at /workspace and nothing of the host's layout
    // (decision 243): not B's path, not the sandboxes' folder, not A's own host path.
    const ran = await a.run(`ls ${b.workspace}; ls -A ${host.dir}; ls -A ${a.workspace}`);
    expect(ran.text).toContain(`cannot access '${b.workspace}': No such file or directory`);
    expect(ran.text).toContain(`cannot access '${host.dir}': No such file or directory`);
    expect(ran.text).toContain(`cannot access '${a.workspace}': No such file or directory`);
    expect(ran.text).not.toContain("secret.txt");
    expect(ran.text.split("\n")).not.toContain(b.id);
    // What the issue saw: `df -h .` printed the host's folder.
    const shown = await a.run(
      "pwd; echo $HOME; df -h . | tail -1; ls -A /; cat /proc/self/mountinfo",
    );
    expect(shown.text).not.toContain(host.dir);
    expect(shown.text).not.toContain(a.id);
    expect(shown.text).toMatch(/^\/workspace\n\/workspace\n.* \/workspace\n/);
  });

  it("A cannot read B's file, by path or through a symlink it makes", async () => {
    const ran = await a.run(
      `cat ${b.workspace}/secret.txt; ln -s ${b.workspace}/secret.txt peek; cat peek`,
    );
    expect(ran.exit?.exitCode).not.toBe(0);
    expect(ran.text).not.toContain("B's secret");
    const read = await a.client.read({ path: "peek" }).catch((err: Error) => err.message);
    expect(String(read)).toMatch(/outside the workspace/);
  });

  it("A cannot write into B's workspace", async () => {
    const ran = await a.run(
      `echo x > ${b.workspace}/planted; mkdir -p ${b.workspace}/d; touch ${b.disk}/spill/x`,
    );
    expect(ran.exit?.exitCode).not.toBe(0);
    expect(existsSync(path.join(b.workspace, "planted"))).toBe(false);
    expect(existsSync(path.join(b.workspace, "d"))).toBe(false);
    expect(existsSync(path.join(b.disk, "spill", "x"))).toBe(false);
  });

  it("A cannot see or signal B's processes, even with kill -9 -1 and B's host pid", async () => {
    const mark = `iso-${process.pid}`;
    const longId = execId();
    const longRun = fold(
      b.client.exec({ execId: longId, command: "sleep 60", env: { TOOLWIRE_MARK: mark } }),
    );
    let pids: number[] = [];
    for (let i = 0; i < 50 && pids.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pids = markedProcesses(mark);
    }
    expect(pids.length).toBeGreaterThan(0);
    const ran = await a.run(`ps -e -o comm=; kill -9 ${pids.join(" ")}; kill -9 -1; true`);
    expect(ran.text).not.toContain("sleep");
    expect(ran.text).toMatch(/No such process/);
    for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(true);
    await b.client.kill(longId);
    expect((await longRun).exit?.signal).toBeTruthy();
  });

  it("B's file tools cannot name A's files either", async () => {
    const res = await b.client
      .read({ path: `../../../${a.id}/disk/workspace/mine.txt` })
      .catch((err: Error) => err.message);
    expect(String(res)).toMatch(/escapes the workspace root/);
  });

  it("each sandbox's disk is its own mount (loop mode, the default for a root host)", () => {
    const mounts = execFileSync("findmnt", ["-rn", "-o", "TARGET"], { encoding: "utf8" });
    expect(mounts.split("\n")).toContain(a.disk);
    expect(mounts.split("\n")).toContain(b.disk);
  });
});
