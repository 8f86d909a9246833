import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountNosuid } from "../../../sandbox/nosuid-mount.ts";
import type { SandboxClient } from "../../../src/execenv/index.ts";
import { execId, fold } from "./harness.ts";
import { type SandboxTestHost, startSandboxTestHost } from "./sandboxes/sandbox-host.ts";

// An attacker's command leaves programs in its workspace, hoping that someone on the host
// (an operator, a cron job, another tenant's process) runs them there (decision 240).
const PLANT = [
  "cp /usr/bin/id suid-id && chmod 4755 suid-id",
  "cp /usr/bin/id sgid-id && chmod 2755 sgid-id",
  "mknod mem c 1 1",
  "cp /bin/cat cap-cat && setcap cap_dac_read_search+ep cap-cat",
  "true",
].join("; ");

let host: SandboxTestHost;
let secrets: string;

beforeAll(async () => {
  if (process.getuid?.() !== 0) {
    throw new Error("these tests switch to 'nobody' with setpriv, which needs root (as CI runs)");
  }
  host = await startSandboxTestHost();
  // `nobody` must reach the workspaces, or the attack would fail for the wrong reason.
  chmodSync(host.root, 0o755);
  chmodSync(host.dir, 0o755);
  secrets = mkdtempSync(path.join(tmpdir(), "toolwire-secret-"));
  writeFileSync(path.join(secrets, "key"), "root only\n", { mode: 0o600 });
});
afterAll(async () => {
  await host?.close();
  if (secrets) rmSync(secrets, { recursive: true, force: true });
});

/** Runs `file args` on the host, outside any jail, as the unprivileged user `nobody`. */
function asNobody(file: string, ...args: string[]): { status: number | null; out: string } {
  const run = spawnSync(
    "setpriv",
    ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", file, ...args],
    { encoding: "utf8", timeout: 10_000 },
  );
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

async function plantAndRun(client: SandboxClient, workspace: string): Promise<void> {
  await fold(client.exec({ execId: execId(), command: PLANT }));
  // The plant worked: a setuid program owned by the host's root is there.
  const suid = statSync(path.join(workspace, "suid-id"));
  expect(suid.mode & 0o4000).toBe(0o4000);

  const id = asNobody(path.join(workspace, "suid-id"));
  expect(id.status).toBe(0);
  expect(id.out).toMatch(/^uid=65534\(nobody\)/);
  expect(id.out).not.toMatch(/euid=/);

  const gid = asNobody(path.join(workspace, "sgid-id"));
  expect(gid.status).toBe(0);
  expect(gid.out).not.toMatch(/egid=/);

  const device = asNobody("/usr/bin/head", "-c", "1", path.join(workspace, "mem"));
  expect(device.status).not.toBe(0);

  const cap = asNobody(path.join(workspace, "cap-cat"), path.join(secrets, "key"));
  expect(cap.status).not.toBe(0);
  expect(cap.out).not.toContain("root only");
}

describe("a program a command plants in its workspace, run from the host as nobody", () => {
  it("gains nothing in the default workspace: no setuid, no setgid, no device, no capability", async () => {
    await plantAndRun(host.client, host.root);
  });

  it("gains nothing in a created sandbox either", async () => {
    const sandbox = await host.create();
    await plantAndRun(sandbox.client, sandbox.workspace);
  });
});

describe("the workspace's nosuid bind, after a host that was killed", () => {
  const isMountpoint = (dir: string) => spawnSync("mountpoint", ["-q", dir]).status === 0;

  it("is adopted by the next host and released as it stops, not stacked and left", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "toolwire-leftover-"));
    try {
      // The killed host's bind: made, never released.
      const killed = await mountNosuid(dir);
      expect(killed.warning).toBeNull();
      expect(isMountpoint(dir)).toBe(true);

      const next = await mountNosuid(dir);
      expect(next.warning).toBeNull();
      await next.release();
      expect(isMountpoint(dir)).toBe(false);
    } finally {
      spawnSync("umount", [dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves a filesystem an operator mounted there (its root is /) in place", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "toolwire-operator-"));
    try {
      expect(
        spawnSync("mount", ["-t", "tmpfs", "-o", "nosuid,nodev,size=1m", "tmpfs", dir]).status,
      ).toBe(0);
      const host = await mountNosuid(dir);
      await host.release();
      expect(isMountpoint(dir)).toBe(true);
    } finally {
      spawnSync("umount", [dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
