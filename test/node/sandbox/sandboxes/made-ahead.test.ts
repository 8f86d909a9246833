// Disks and networks made ahead (decision 225), on a real host as root: loop-mounted
// images and network namespaces with the proxy's socket in each. A sandbox that takes them gets a
// fresh file system and its full quota; the pool refills and never holds more than its
// size; creates past what is ready make their own.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_CONFIG } from "../../../../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS } from "../../../../sandbox/sandboxes/config.ts";
import type { SandboxInfo } from "../../../../sandbox/sandboxes/hosted-sandbox.ts";
import { READY_DIR } from "../../../../sandbox/sandboxes/ready-parts.ts";
import { SandboxClient } from "../../../../src/execenv/index.ts";
import { execId, fold, startTestHost } from "../harness.ts";
import { type SandboxTestHost, sandboxId, startSandboxTestHost } from "./sandbox-host.ts";

if (process.getuid?.() !== 0) throw new Error("these tests need root (loop-mounted disks)");

const MiB = 1024 * 1024;
const POOL = 2;
let host: SandboxTestHost;

beforeAll(async () => {
  host = await startSandboxTestHost({ diskBytes: 32 * MiB }, 16, { poolSize: POOL, network: true });
  await host.sandboxes.ready?.filled();
});
afterAll(() => host.close());

/** The folders of the disks ready now (each holding its image and the disk mounted beside it). */
const readyDisks = () => readdirSync(path.join(host.dir, READY_DIR, "disks")).sort();
const mounts = () => execFileSync("findmnt", ["-rn", "-o", "TARGET"], { encoding: "utf8" });

async function info(id: string): Promise<SandboxInfo> {
  return (await (await host.request("GET", `/v1/sandboxes/${id}`)).json()) as SandboxInfo;
}

// Each test makes and mounts real disks: seconds on a loaded machine.
describe("disks and networks made ahead", { timeout: 60_000 }, () => {
  it("the pool fills to its size: that many formatted, mounted disks and running networks", async () => {
    expect(host.sandboxes.ready?.counts()).toMatchObject({ disks: POOL, networks: POOL });
    expect(readyDisks()).toHaveLength(POOL);
    const mounted = mounts()
      .split("\n")
      .filter((t) => t.startsWith(`${host.dir}/${READY_DIR}/disks/`));
    expect(mounted).toHaveLength(POOL);
  });

  it("a create takes a ready disk (its folder renamed to the sandbox's) and the pool refills with a new one", async () => {
    const before = readyDisks();
    const sbx = await host.create();
    const left = readyDisks();
    expect(left.length).toBeLessThanOrEqual(POOL);
    expect(before.filter((name) => !left.includes(name))).toHaveLength(1);
    expect(existsSync(path.join(host.dir, sbx.id, "disk.img"))).toBe(true);
    expect(mounts().split("\n")).toContain(path.join(host.dir, sbx.id, "disk"));
    await host.sandboxes.ready?.filled();
    const refilled = readyDisks();
    expect(refilled).toHaveLength(POOL);
    expect(refilled.filter((name) => !before.includes(name))).toHaveLength(1);
    expect((await sbx.run("echo hi")).text).toContain("hi");
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("a sandbox on a pooled disk never sees an earlier sandbox's files: each gets a fresh file system", async () => {
    const first = await host.create();
    const wrote = await first.run(
      "echo secret > left.txt && head -c 4000000 /dev/urandom > big && sync && ls",
    );
    expect(wrote.text).toContain("left.txt");
    const usedByFirst = (await info(first.id)).disk.usedBytes;
    await host.request("DELETE", `/v1/sandboxes/${first.id}`);
    await host.sandboxes.ready?.filled();
    for (let i = 0; i < POOL + 1; i++) {
      const next = await host.create();
      const seen = await next.run("ls -A; cat left.txt 2>&1; echo end");
      expect(seen.text.trim()).toMatch(/^cat: left.txt: No such file or directory\s+end$/);
      expect((await info(next.id)).disk.usedBytes).toBeLessThan(usedByFirst);
      await host.request("DELETE", `/v1/sandboxes/${next.id}`);
    }
  });

  it("the quota holds on a pooled disk: a write past it fails with ENOSPC", async () => {
    await host.sandboxes.ready?.filled();
    const sbx = await host.create();
    const disk = (await info(sbx.id)).disk;
    expect(disk.mode).toBe("loop");
    expect(disk.totalBytes).toBeLessThanOrEqual(32 * MiB);
    expect(disk.totalBytes).toBeGreaterThan(28 * MiB);
    const ran = await sbx.run(`head -c ${40 * MiB} /dev/zero > big; echo "exit=$?"`);
    expect(ran.text).toMatch(/No space left on device/);
    expect(ran.text).toContain("exit=1");
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("a disk of another size is made for it, and the ready images stay for the default size", async () => {
    await host.sandboxes.ready?.filled();
    const before = readyDisks();
    const sbx = await host.create({ diskBytes: 16 * MiB });
    expect((await info(sbx.id)).disk.totalBytes).toBeLessThanOrEqual(16 * MiB);
    expect(readyDisks()).toEqual(before);
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("a network made ahead works: its proxy listens inside the sandbox's own namespace", async () => {
    await host.sandboxes.ready?.filled();
    const sbx = await host.create();
    const ran = await sbx.run(
      "exec 3<>/dev/tcp/127.0.0.1/900 && echo proxy-open; echo $HTTP_PROXY; ip -o link | wc -l",
    );
    expect(ran.text).toContain("proxy-open");
    expect(ran.text).toContain("http://127.0.0.1:900");
    // Its namespace has loopback only.
    expect(ran.text.trim().split("\n").at(-1)).toBe("1");
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("at its limit: more creates at once than are ready all succeed, and the pool holds its size again, never more", async () => {
    await host.sandboxes.ready?.filled();
    const made = await Promise.all(Array.from({ length: POOL + 3 }, () => host.create()));
    const runs = await Promise.all(made.map((s) => s.run(`echo ${s.id}`)));
    expect(runs.map((r) => r.text.trim())).toEqual(made.map((s) => s.id));
    await host.sandboxes.ready?.filled();
    expect(host.sandboxes.ready?.counts()).toMatchObject({ disks: POOL, networks: POOL });
    expect(readyDisks()).toHaveLength(POOL);
    await Promise.all(made.map((s) => host.request("DELETE", `/v1/sandboxes/${s.id}`)));
  });

  it("a host that starts again removes what the last one left made ahead, and makes its own", async () => {
    const leftover = path.join(host.dir, READY_DIR, "disks", "left-by-a-dead-host.img");
    writeFileSync(leftover, "");
    const next = await startTestHost({
      egress: { ...DEFAULT_SANDBOX_CONFIG.egress, available: true },
      sandboxes: {
        dir: host.dir,
        disk: "loop",
        maxSandboxes: 4,
        poolSize: 1,
        limits: { ...DEFAULT_SANDBOX_LIMITS, diskBytes: 32 * MiB },
      },
    });
    try {
      await next.sandboxes.ready?.filled();
      expect(existsSync(leftover)).toBe(false);
      expect(next.sandboxes.ready?.counts()).toMatchObject({ disks: 1, networks: 1 });
    } finally {
      await next.close();
    }
    // Closing a host discards what it made ahead: no image, no disk or namespace mount left.
    expect(readdirSync(path.join(host.dir, READY_DIR, "disks"))).toHaveLength(0);
    expect(mounts()).not.toContain(`${host.dir}/${READY_DIR}/`);
  });
});

describe("made ahead under a shared mount (systemd's `/`)", { timeout: 60_000 }, () => {
  it("the kernel refuses to move a mount out of it, but a ready disk is taken by a rename all the same: the sandbox works and its quota holds", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "toolwire-shared-"));
    execFileSync("mount", ["--bind", dir, dir]);
    execFileSync("mount", ["--make-shared", dir]);
    const shared = await startTestHost({
      egress: { ...DEFAULT_SANDBOX_CONFIG.egress, available: false },
      sandboxes: {
        dir,
        disk: "loop",
        maxSandboxes: 4,
        poolSize: 1,
        limits: { ...DEFAULT_SANDBOX_LIMITS, diskBytes: 32 * MiB },
      },
    });
    try {
      await shared.sandboxes.ready?.filled();
      const [ready] = readdirSync(path.join(dir, READY_DIR, "disks"));
      // What a host before decision 257 met here: a move out of a shared mount is refused.
      const probe = path.join(dir, "probe");
      mkdirSync(probe);
      expect(() =>
        execFileSync(
          "mount",
          ["--move", path.join(dir, READY_DIR, "disks", ready!, "disk"), probe],
          {
            stdio: "pipe",
          },
        ),
      ).toThrow();
      rmSync(probe, { recursive: true });
      const id = sandboxId();
      const res = await fetch(`${shared.url}/v1/sandboxes`, {
        method: "POST",
        headers: { authorization: `Bearer ${shared.token}`, "content-type": "application/json" },
        body: JSON.stringify({ id }),
      });
      expect(res.status).toBe(201);
      // It took the ready disk, mounted where it was made, rather than formatting another.
      expect(existsSync(path.join(dir, id, "disk.img"))).toBe(true);
      expect(readdirSync(path.join(dir, READY_DIR, "disks"))).not.toContain(ready);
      expect(mounts().split("\n")).toContain(path.join(dir, id, "disk"));
      const client = new SandboxClient(`${shared.url}/sandboxes/${id}`, shared.token);
      const ran = await fold(
        client.exec({
          execId: execId(),
          command: `ls -A; head -c ${40 * MiB} /dev/zero > big; echo "exit=$?"`,
        }),
      );
      expect(ran.text).toMatch(/No space left on device/);
      expect(ran.text).toContain("exit=1");
      expect(ran.text).not.toContain("lost+found");
    } finally {
      await shared.close();
      execFileSync("umount", ["-R", dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
