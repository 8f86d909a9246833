// A host restart loses no sandbox (issue 30, decision 246): the real host process is
// killed with -9 while a command runs, started again on the same root, and its
// sandboxes, their files and network policies are there and run commands; one whose
// disk really is gone is reported lost, in words, not dropped; one laid out as a host
// before decision 257 laid it out (its disk mounted at its folder) reopens too.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxClient } from "../../../../src/execenv/index.ts";
import {
  freePort,
  HOST,
  type Started,
  startNode,
  stopGroup,
  waitUntilUp,
} from "../../../support/processes.ts";
import { execId, fold } from "../harness.ts";
import { sandboxId } from "./sandbox-host.ts";

const asRoot = process.getuid?.() === 0;
if (!asRoot) throw new Error("these tests need root (loop-mounted disks, network namespaces)");

const dir = mkdtempSync(path.join(tmpdir(), "toolwire-restart-"));
const token = randomBytes(24).toString("hex");
let port: number;
let host: Started;
const url = () => `http://${HOST}:${port}`;

async function start(): Promise<Started> {
  const started = startNode(["sandbox/main.ts"], {
    SANDBOX_TOKEN: token,
    HOST,
    PORT: String(port),
    SANDBOX_ROOT: path.join(dir, "ws"),
    SANDBOXES_DIR: path.join(dir, "sbx"),
    SANDBOX_DISK: "loop",
    SANDBOX_DISK_BYTES: String(16 * 1024 * 1024),
  });
  await waitUntilUp(`${url()}/healthz`, started);
  return started;
}

function request(method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${url()}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const client = (id: string) => new SandboxClient(`${url()}/sandboxes/${id}`, token);
const run = (id: string, command: string) => fold(client(id).exec({ execId: execId(), command }));
/** Mount points at or under `target`. */
const mountsAt = (target: string) =>
  execFileSync("findmnt", ["-rn", "-o", "TARGET"], { encoding: "utf8" })
    .split("\n")
    .filter((t) => t === target);

/** Lets go of every mount under `folder` (the disk; the network's namespace file, when it is there). */
const unmountUnder = (folder: string) => {
  for (const target of execFileSync("findmnt", ["-rn", "-o", "TARGET"], { encoding: "utf8" })
    .split("\n")
    .filter((t) => t.startsWith(`${folder}/`))
    .reverse()) {
    execFileSync("umount", ["-l", target]);
  }
};

const withPolicy = sandboxId();
const plain = sandboxId();
const doomed = sandboxId();
const flat = sandboxId();
const policy = { allow: ["example.com", "*.example.org:8443"] };

beforeAll(async () => {
  port = await freePort();
  host = await start();
  for (const [id, network] of [
    [withPolicy, policy],
    [plain, undefined],
    [doomed, undefined],
    [flat, undefined],
  ] as const) {
    const res = await request("POST", "/v1/sandboxes", { id, network });
    expect(res.status).toBe(201);
  }
  await run(withPolicy, "mkdir -p src && echo kept > src/a.txt && seq 1 100000");
  await run(plain, "echo plain > b.txt");
  await run(flat, "echo flat > c.txt");
  // A command running when the host dies: the process goes with it.
  void run(plain, "sleep 301.5").catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.kill(-host.child.pid!, "SIGKILL");
  await new Promise((resolve) => host.child.once("exit", resolve));
  // The doomed sandbox's disk goes for real while the host is down: only its record stays.
  const doomedAt = path.join(dir, "sbx", doomed);
  unmountUnder(doomedAt);
  rmSync(doomedAt, { recursive: true, force: true });
  // What a host before decision 257 left: the image beside the folder, the disk mounted at
  // the folder itself, and a record that names no layout.
  const flatAt = path.join(dir, "sbx", flat);
  unmountUnder(flatAt);
  renameSync(`${flatAt}/disk.img`, `${flatAt}.img`);
  rmSync(flatAt, { recursive: true, force: true });
  const { layout: _, ...oldRecord } = JSON.parse(readFileSync(`${flatAt}.json`, "utf8"));
  writeFileSync(`${flatAt}.json`, JSON.stringify(oldRecord));
  host = await start();
}, 120_000);

afterAll(async () => {
  for (const id of [withPolicy, plain, flat]) await request("DELETE", `/v1/sandboxes/${id}`);
  await stopGroup(host.child);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("a host killed with -9 and started again", () => {
  it("still holds its sandboxes, with their limits, creation time and network policy", async () => {
    const list = (await (await request("GET", "/v1/sandboxes")).json()) as {
      sandboxes: { id: string; limits: { diskBytes: number }; network: { policy: unknown } }[];
    };
    expect(list.sandboxes.map((s) => s.id).sort()).toEqual([withPolicy, plain, flat].sort());
    const info = list.sandboxes.find((s) => s.id === withPolicy)!;
    expect(info.limits.diskBytes).toBe(16 * 1024 * 1024);
    expect(info.network.policy).toEqual(policy);
  });

  it("their files are there, and commands run in them again", async () => {
    expect((await run(withPolicy, "cat src/a.txt")).text).toBe("kept\n");
    expect((await run(plain, "cat b.txt && echo more >> b.txt && cat b.txt")).text).toBe(
      "plain\nplain\nmore\n",
    );
    const read = await client(withPolicy).read({ path: "src/a.txt" });
    expect(read.lines).toEqual(["kept"]);
  });

  it("the command that ran when the host died is gone", () => {
    const found = execFileSync("sh", ["-c", "pgrep -fx 'sleep 301.5' || true"], {
      encoding: "utf8",
    });
    expect(found.trim()).toBe("");
  });

  it("a disk left mounted by the killed host is adopted, not mounted twice", () => {
    for (const id of [withPolicy, plain]) {
      expect(mountsAt(path.join(dir, "sbx", id, "disk"))).toHaveLength(1);
      expect(mountsAt(path.join(dir, "sbx", id, "net", "ns"))).toHaveLength(1);
    }
  });

  it("a policy changed after the restart is kept through the next one", async () => {
    const next = { allow: ["example.net"] };
    expect((await request("PUT", `/v1/sandboxes/${withPolicy}/network`, next)).status).toBe(200);
    await stopGroup(host.child);
    host = await start();
    const info = (await (await request("GET", `/v1/sandboxes/${withPolicy}`)).json()) as {
      network: { policy: unknown };
    };
    expect(info.network.policy).toEqual(next);
    expect((await run(withPolicy, "cat src/a.txt")).text).toBe("kept\n");
  }, 60_000);

  it("a sandbox an older host laid out (its disk at its folder) reopens where it is, and is removed whole", async () => {
    const flatAt = path.join(dir, "sbx", flat);
    expect(mountsAt(flatAt)).toHaveLength(1);
    expect((await run(flat, "cat c.txt && echo again >> c.txt && cat c.txt")).text).toBe(
      "flat\nflat\nagain\n",
    );
    // Its record keeps saying so: the next host reopens it the same way.
    expect(JSON.parse(readFileSync(`${flatAt}.json`, "utf8")).layout).toBeUndefined();
    expect((await request("DELETE", `/v1/sandboxes/${flat}`)).status).toBe(200);
    expect(mountsAt(flatAt)).toHaveLength(0);
    expect(mountsAt(`${flatAt}/net/ns`)).toHaveLength(0);
    expect(() => readFileSync(`${flatAt}.img`)).toThrow(/ENOENT/);
  });

  it("a sandbox whose disk is really gone is reported lost in words, and can be deleted", async () => {
    const res = await request("GET", `/v1/sandboxes/${doomed}`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(
      new RegExp(`sandbox '${doomed}' was on this host but is lost: its disk image is missing`),
    );
    expect(body.error.message).not.toContain(dir);
    expect(host.log.join("")).toMatch(new RegExp(`sandbox ${doomed} is lost`));
    expect((await request("DELETE", `/v1/sandboxes/${doomed}`)).status).toBe(200);
    expect((await request("GET", `/v1/sandboxes/${doomed}`)).status).toBe(404);
    expect((await request("POST", "/v1/sandboxes", { id: doomed })).status).toBe(201);
    expect((await request("DELETE", `/v1/sandboxes/${doomed}`)).status).toBe(200);
  });
});
