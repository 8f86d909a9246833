/**
 * A sandbox's network keeps no process while it is idle (decision 254): the proxy's
 * socket is made by a child that exits, and the way in of preview URLs is a bridge
 * started when a connection needs it, stopped when idle, and started again after it
 * died. Real namespaces and a real server inside one (needs root).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedSpawner } from "../../../../sandbox/exec/spawner.ts";
import { IngressBridge } from "../../../../sandbox/network/ingress-bridge.ts";
import { NetworkNamespace } from "../../../../sandbox/network/netns.ts";
import { SpawnerWayIn, type WayIn } from "../../../../sandbox/network/way-in.ts";
import { type EgressTestHost, startEgressTestHost } from "./egress-host.ts";

const dir = mkdtempSync(path.join(tmpdir(), "tw-way-in-"));
let ns: NetworkNamespace;
let server: ChildProcess;

/** The command lines of this process's children that mention `text`. */
function childrenWith(text: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (ppid === process.pid && cmdline.includes(text))
        found.push({ pid: Number(entry), cmdline });
    } catch {
      // The process ended while it was read.
    }
  }
  return found;
}

async function page(wayIn: WayIn, port: number): Promise<string> {
  const socket: Socket = await wayIn.connect(port);
  socket.end("GET / HTTP/1.0\r\n\r\n");
  let got = "";
  for await (const chunk of socket) got += chunk;
  return got;
}

/** The server's page, asked again while Python starts (slow on a loaded machine: refusals first). */
async function firstPage(wayIn: WayIn): Promise<string> {
  let got = "";
  const deadline = Date.now() + 60_000;
  while (!got.includes("200") && Date.now() < deadline) {
    got = await page(wayIn, 8000).catch(() => "");
    if (!got) await new Promise((r) => setTimeout(r, 100));
  }
  return got;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  ns = await NetworkNamespace.create(path.join(dir, "ns"));
  const [file, ...args] = [
    ...ns.enter(),
    "python3",
    "-m",
    "http.server",
    "8000",
    "--bind",
    "127.0.0.1",
    "--directory",
    dir,
  ];
  server = spawn(file as string, args, { stdio: "ignore" });
}, 30_000);
afterAll(async () => {
  server?.kill("SIGKILL");
  await ns?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe("the way in of preview URLs", () => {
  it("starts when a connection needs it, stops when idle, and starts again after it died", async () => {
    const inSocket = path.join(dir, "in.sock");
    const bridge = new IngressBridge(() => ns.enter(), inSocket, 200);
    expect(bridge.running).toBe(false);
    expect(childrenWith(inSocket)).toEqual([]);
    expect(await firstPage(bridge)).toContain("200 OK");
    // Idle: the bridge process goes.
    await until(() => !bridge.running && childrenWith(inSocket).length === 0, "the idle stop");
    expect(await page(bridge, 8000)).toContain("200 OK");
    // Killed from outside while a connection is open: the next connection starts it again.
    const open = await bridge.connect(8000);
    const [running] = childrenWith(inSocket);
    expect(running).toBeDefined();
    process.kill(running!.pid, "SIGKILL");
    await until(() => !bridge.running, "the kill to be seen");
    open.destroy();
    expect(await page(bridge, 8000)).toContain("200 OK");
    // A port where nothing listens is told apart from a bridge that is not there.
    await expect(bridge.connect(8001)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    bridge.stop();
    await expect(bridge.connect(8000)).rejects.toThrow("the sandbox has ended");
    await until(() => childrenWith(inSocket).length === 0, "the stop");
  }, 90_000);
});

describe("the way in on a root host: the spawner connects inside the namespace", () => {
  it("reaches the sandbox's own port with no process and no socket file of its own", async () => {
    const inSocket = path.join(dir, "in-spawner.sock");
    const bridge = new IngressBridge(() => ns.enter(), inSocket, 200);
    const wayIn = new SpawnerWayIn(ns.file, sharedSpawner, bridge);
    expect(await firstPage(wayIn)).toContain("200 OK");
    expect(bridge.running).toBe(false);
    expect(existsSync(inSocket)).toBe(false);
    expect(childrenWith(" -e ")).toEqual([]);
    await expect(wayIn.connect(8001)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    // A connection still open when the sandbox ends is closed with it.
    const open = await wayIn.connect(8000);
    const closed = new Promise((r) => open.once("close", r));
    wayIn.stop();
    await closed;
    expect(open.destroyed).toBe(true);
    await expect(wayIn.connect(8000)).rejects.toThrow("the sandbox has ended");
  }, 90_000);

  it("cannot reach a port of another sandbox's namespace", async () => {
    // The server listens in `ns`; a second namespace's way in asks for the same port.
    const other = await NetworkNamespace.create(path.join(dir, "other-ns"));
    try {
      const bridge = new IngressBridge(() => other.enter(), path.join(dir, "other.sock"));
      const wayIn = new SpawnerWayIn(other.file, sharedSpawner, bridge);
      expect(await page(new SpawnerWayIn(ns.file, sharedSpawner, bridge), 8000)).toContain(
        "200 OK",
      );
      await expect(wayIn.connect(8000)).rejects.toMatchObject({ code: "ECONNREFUSED" });
      wayIn.stop();
    } finally {
      await other.remove();
    }
  });

  it("falls back to the bridge process where there is no spawner", async () => {
    const bridge = new IngressBridge(() => ns.enter(), path.join(dir, "fallback.sock"), 200);
    const wayIn = new SpawnerWayIn(ns.file, () => null, bridge);
    expect(await page(wayIn, 8000)).toContain("200 OK");
    expect(bridge.running).toBe(true);
    wayIn.stop();
    expect(bridge.running).toBe(false);
  }, 60_000);
});

describe("an idle sandbox's network", () => {
  let host: EgressTestHost;
  beforeAll(async () => {
    host = await startEgressTestHost({}, { allowPrivate: true });
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });

  it("keeps no process, and its proxy still answers", async () => {
    const a = await host.create({ allow: ["example.test"] });
    const b = await host.create({ allow: [] });
    // Every Node child a network ever started (`node -e`) has gone.
    await until(() => childrenWith(" -e ").length === 0, "the networks' children to exit");
    const ran = await a.run("curl -sS http://not-listed.test/; echo");
    expect(ran.text).toContain("not-listed.test");
    expect(ran.text).toContain(a.id);
    expect((await b.run("curl -sS http://example.test/; echo")).text).toContain(b.id);
    expect(childrenWith(" -e ")).toEqual([]);
  }, 90_000);
});
