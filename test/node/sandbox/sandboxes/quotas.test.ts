import { statfsSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxInfo } from "../../../../sandbox/sandboxes/hosted-sandbox.ts";
import { execId, fold } from "../harness.ts";
import { type SandboxTestHost, startSandboxTestHost } from "./sandbox-host.ts";

const MiB = 1024 * 1024;
let host: SandboxTestHost;

beforeAll(async () => {
  host = await startSandboxTestHost({ diskBytes: 32 * MiB }, 32);
});
afterAll(() => host.close());

async function info(id: string): Promise<SandboxInfo> {
  return (await (await host.request("GET", `/v1/sandboxes/${id}`)).json()) as SandboxInfo;
}

describe("disk quota (workspace and spills on one 32 MiB file system)", () => {
  it("a write just under the free space succeeds", async () => {
    const sbx = await host.create();
    const free = (await info(sbx.id)).disk.freeBytes;
    const ran = await sbx.run(`head -c ${free - MiB} /dev/zero > fill && echo done`);
    expect(ran.exit?.exitCode).toBe(0);
    expect(ran.text).toContain("done");
  });

  it("a write of exactly the free space succeeds, and one byte more fails", async () => {
    const sbx = await host.create();
    // ext4 spends metadata blocks as a file grows, so the test asks the file system what
    // remains once the file is nearly full, as a user would. When the disk is full the
    // command's output cannot be spilled either (spills share the quota): exit codes tell.
    await sbx.run(`touch fill && head -c $(( $(stat -f -c '%a*%S' .) - 65536 )) /dev/zero > fill`);
    const exact = await sbx.run(`head -c $(( $(stat -f -c '%a*%S' .) )) /dev/zero >> fill`);
    expect(exact.exit?.exitCode).toBe(0);
    expect((await info(sbx.id)).disk.freeBytes).toBe(0);
    // The host then cannot copy the command's output either, and says so.
    const oneMore = await sbx.run("printf x >> fill");
    expect(oneMore.exit?.exitCode).not.toBe(0);
    expect(`${oneMore.text} ${oneMore.exit?.error}`).toMatch(/No space left|ENOSPC/);
  });

  it("a write over the quota fails with ENOSPC in the command, and the host's disk is not the limit", async () => {
    const sbx = await host.create();
    const hostFreeBefore = statfsSync(host.dir).bavail * statfsSync(host.dir).bsize;
    const ran = await sbx.run(`head -c ${40 * MiB} /dev/zero > big; echo "exit=$?"`);
    expect(ran.text).toMatch(/No space left on device/);
    expect(ran.text).toContain("exit=1");
    const image = statSync(path.join(host.dir, sbx.id, "disk.img"));
    expect(image.blocks * 512).toBeLessThanOrEqual(32 * MiB);
    expect(hostFreeBefore).toBeGreaterThan(40 * MiB);
  });

  it("output spilled by one command counts against the same quota", async () => {
    const sbx = await host.create();
    const ran = await fold(
      sbx.client.exec({
        execId: execId(),
        command: `head -c ${40 * MiB} /dev/zero | tr '\\0' 'a'`,
      }),
    );
    expect(ran.exit).not.toBeNull();
    const used = (await info(sbx.id)).disk.usedBytes;
    expect(used).toBeLessThanOrEqual(32 * MiB);
  });

  it("a create asking for more disk than the host allows is a 400 that names the limit; less is granted", async () => {
    const over = await host.request(
      "POST",
      "/v1/sandboxes",
      JSON.stringify({ id: "sbx_default_0123456789abcdef0123", limits: { diskBytes: 64 * MiB } }),
    );
    expect(over.status).toBe(400);
    expect(await over.text()).toContain("limits.diskBytes");
    const smaller = await host.create({ diskBytes: 16 * MiB });
    expect((await info(smaller.id)).disk.totalBytes).toBeLessThanOrEqual(16 * MiB);
    expect((await info(smaller.id)).limits.diskBytes).toBe(16 * MiB);
  });
});

describe("concurrent execs per sandbox", () => {
  it("maxExecs commands run at once; one more waits its turn, then runs; another sandbox is not held up", {
    timeout: 30_000,
  }, async () => {
    const sbx = await host.create({ maxExecs: 2 });
    const execs = async () =>
      (
        (await (await host.request("GET", `/sandboxes/${sbx.id}/healthz`)).json()) as {
          execs: { running: number; queued: number; maxRunning: number };
        }
      ).execs;
    const ids = [execId(), execId()];
    const running = ids.map((id) => fold(sbx.client.exec({ execId: id, command: "sleep 30" })));
    while ((await execs()).running < 2) await new Promise((r) => setTimeout(r, 50));
    const third = fold(sbx.client.exec({ execId: execId(), command: "echo third" }));
    while ((await execs()).queued < 1) await new Promise((r) => setTimeout(r, 50));
    expect(await execs()).toMatchObject({ running: 2, queued: 1, maxRunning: 2 });
    expect((await info(sbx.id)).runningExecs).toBe(2);
    // Another sandbox is not affected.
    const other = await host.create({ maxExecs: 2 });
    expect((await other.run("echo other")).exit?.exitCode).toBe(0);
    await sbx.client.kill(ids[0]!);
    await running[0];
    const ran = await third;
    expect(ran.text).toBe("third\n");
    expect(ran.updates.filter((u) => u.kind === "queue")).toEqual([
      { kind: "queue", ahead: 0 },
      { kind: "queue", ahead: null },
    ]);
    await sbx.client.kill(ids[1]!);
    await running[1];
  });
});

describe("processes per sandbox (all its commands together)", () => {
  it("under the limit one command forks freely; two commands together cannot pass it", {
    timeout: 30_000,
  }, async () => {
    const sbx = await host.create({ maxProcesses: 24, maxExecs: 2 });
    const first = execId();
    const holding = fold(
      sbx.client.exec({
        execId: first,
        command: "for i in $(seq 16); do sleep 30 & done; echo forked-16; wait",
      }),
    );
    await new Promise((r) => setTimeout(r, 800));
    // dash, unlike bash, does not retry a refused fork for 15 s.
    const second = await sbx.run(
      "sh -c 'for i in $(seq 16); do sleep 30 & done; echo all-16; kill $(jobs -p)'",
    );
    expect(second.text).toMatch(/Cannot fork/);
    expect(second.text).not.toContain("all-16");
    await sbx.client.kill(first);
    expect((await holding).text).toContain("forked-16");
  });
});

describe("memory per process", () => {
  it("an allocation under maxMemoryBytes succeeds and one over it fails", {
    timeout: 30_000,
  }, async () => {
    const sbx = await host.create({ maxMemoryBytes: 128 * MiB });
    const under = await sbx.run(`x=$(head -c ${32 * MiB} /dev/zero | tr '\\0' a); echo \${#x}`);
    expect(under.text.trim()).toBe(String(32 * MiB));
    const over = await sbx.run(
      `x=$(head -c ${160 * MiB} /dev/zero | tr '\\0' a); echo "len=\${#x}"`,
    );
    expect(over.text).toMatch(/cannot allocate|xmalloc|memory/i);
  });
});
