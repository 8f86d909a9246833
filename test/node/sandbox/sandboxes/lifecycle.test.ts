import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold } from "../harness.ts";
import { type SandboxTestHost, sandboxId, startSandboxTestHost } from "./sandbox-host.ts";

let host: SandboxTestHost;
beforeAll(async () => {
  host = await startSandboxTestHost({}, 2);
});
afterAll(() => host.close());

const mounts = () => execFileSync("findmnt", ["-rn", "-o", "TARGET"], { encoding: "utf8" });

/** The cgroup folders of the host in this process (cgroups.ts names them after its pid). */
const cgroupFolders = () =>
  execFileSync(
    "find",
    ["/sys/fs/cgroup", "-maxdepth", "8", "-type", "d", "-name", `toolwire-${process.pid}-*`],
    { encoding: "utf8" },
  )
    .split("\n")
    .filter(Boolean)
    .sort();

describe("a sandbox's life on its host", () => {
  it("create answers 201 with its limits and disk; list and get show it", async () => {
    const id = sandboxId();
    const res = await host.request("POST", "/v1/sandboxes", JSON.stringify({ id }));
    expect(res.status).toBe(201);
    const info = (await res.json()) as {
      id: string;
      limits: { diskBytes: number };
      disk: { mode: string };
    };
    expect(info).toMatchObject({
      id,
      limits: { diskBytes: 64 * 1024 * 1024 },
      disk: { mode: "loop" },
    });
    const list = (await (await host.request("GET", "/v1/sandboxes")).json()) as {
      sandboxes: { id: string }[];
    };
    expect(list.sandboxes.map((s) => s.id)).toContain(id);
    expect((await host.request("GET", `/sandboxes/${id}/healthz`)).status).toBe(200);
    await host.request("DELETE", `/v1/sandboxes/${id}`);
  });

  it("every sandbox route but healthz needs the host's token", async () => {
    const sbx = await host.create();
    for (const [method, route] of [
      ["POST", "/v1/sandboxes"],
      ["GET", "/v1/sandboxes"],
      ["GET", `/v1/sandboxes/${sbx.id}`],
      ["DELETE", `/v1/sandboxes/${sbx.id}`],
      ["POST", `/sandboxes/${sbx.id}/v1/exec`],
      ["PUT", `/sandboxes/${sbx.id}/v1/files`],
      ["GET", `/sandboxes/${sbx.id}/v1/files`],
    ] as const) {
      const res = await fetch(`${host.url}${route}`, { method });
      expect(res.status, `${method} ${route}`).toBe(401);
    }
    expect((await host.request("GET", `/v1/sandboxes/${sbx.id}`)).status).toBe(200);
    await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
  });

  it("bad ids, unknown fields of limits and a second create of one id are refused", async () => {
    const bad = await host.request("POST", "/v1/sandboxes", JSON.stringify({ id: "../x" }));
    expect(bad.status).toBe(400);
    const id = sandboxId();
    expect((await host.request("POST", "/v1/sandboxes", JSON.stringify({ id }))).status).toBe(201);
    const again = await host.request("POST", "/v1/sandboxes", JSON.stringify({ id }));
    expect(again.status).toBe(409);
    await host.request("DELETE", `/v1/sandboxes/${id}`);
  });

  it("the host holds at most SANDBOX_MAX_SANDBOXES: at the limit one more is a 429", async () => {
    const a = await host.create();
    const b = await host.create();
    const third = await host.request("POST", "/v1/sandboxes", JSON.stringify({ id: sandboxId() }));
    expect(third.status).toBe(429);
    expect(await third.text()).toContain("SANDBOX_MAX_SANDBOXES");
    await host.request("DELETE", `/v1/sandboxes/${a.id}`);
    await host.request("DELETE", `/v1/sandboxes/${b.id}`);
  });

  it("delete stops its running command, unmounts and removes its files, cgroups and record; then every route is a 404", async () => {
    const cgroupsBefore = cgroupFolders();
    const sbx = await host.create();
    await sbx.run("echo data > kept-until-delete");
    const running = fold(sbx.client.exec({ execId: execId(), command: "echo started; sleep 60" }));
    await new Promise((r) => setTimeout(r, 300));
    const res = await host.request("DELETE", `/v1/sandboxes/${sbx.id}`);
    expect(res.status).toBe(200);
    const ended = await running;
    expect(ended.exit?.signal).toBeTruthy();
    expect(ended.text).toContain("started");
    expect(existsSync(path.join(host.dir, sbx.id))).toBe(false);
    expect(existsSync(path.join(host.dir, sbx.id, "disk.img"))).toBe(false);
    expect(existsSync(path.join(host.dir, `${sbx.id}.json`))).toBe(false);
    expect(mounts()).not.toContain(sbx.id);
    // Its own cgroup and its killed command's are gone by the time the delete answers.
    expect(cgroupFolders()).toEqual(cgroupsBefore);
    expect((await host.request("GET", `/sandboxes/${sbx.id}/healthz`)).status).toBe(404);
    const again = await sbx.run("true").catch((err: { status?: number }) => err);
    expect((again as { status?: number }).status).toBe(404);
    expect((await host.request("DELETE", `/v1/sandboxes/${sbx.id}`)).status).toBe(404);
  });

  it("delete lets go of the disk: the host holds no descriptor into it and its loop device is freed", async () => {
    const sbx = await host.create();
    const ran = await sbx.run("seq 1 3 && echo done");
    expect(ran.text).toContain("done");
    const image = path.join(host.dir, sbx.id, "disk.img");
    expect(execFileSync("losetup", ["-j", image], { encoding: "utf8" })).toContain(image);
    expect((await host.request("DELETE", `/v1/sandboxes/${sbx.id}`)).status).toBe(200);
    // The host runs in this process: none of its descriptors may point into the sandbox.
    const held = readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return [];
      }
    });
    expect(held.filter((target) => target.includes(sbx.id))).toEqual([]);
    expect(held.filter((target) => target === "/spill" || target === "/workspace")).toEqual([]);
    expect(execFileSync("losetup", ["-a"], { encoding: "utf8" })).not.toContain(sbx.id);
  });

  it("a host that starts again removes what the last one left without a record (a create cut off)", async () => {
    const other = await startSandboxTestHost();
    const sbx = await other.create();
    // Simulate a crash mid-create: the disk is made and mounted, the record not written yet.
    const { SandboxSet } = await import("../../../../sandbox/sandboxes/sandbox-set.ts");
    expect(mounts()).toContain(sbx.id);
    rmSync(path.join(other.dir, `${sbx.id}.json`));
    await SandboxSet.open({ isolation: "none" } as never, {
      dir: other.dir,
      disk: "loop",
      maxSandboxes: 1,
      limits: {} as never,
    });
    expect(mounts()).not.toContain(sbx.id);
    expect(existsSync(path.join(other.dir, sbx.id))).toBe(false);
    await other.close();
  }, 30_000);
});
