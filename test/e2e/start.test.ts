// `npm start` as a user runs it: its children (the sandbox host, wrangler dev and its
// workerd) end when it dies, also by kill -9 of npm or of scripts/start.ts itself.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const workspaces: string[] = [];
afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Every process below `pid`, from /proc. */
function descendants(pid: number): { pid: number; cmd: string }[] {
  const children = new Map<number, number[]>();
  const cmds = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      cmds.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " "));
    } catch {}
  }
  const out: { pid: number; cmd: string }[] = [];
  const queue = [...(children.get(pid) ?? [])];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    out.push({ pid: next, cmd: cmds.get(next) ?? "" });
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

/** `npm start` on free ports, once both its children answer. */
async function npmStart(): Promise<{ npm: ChildProcess; urls: string[]; pids: number[] }> {
  const [workerPort, sandboxPort] = [await freePort(), await freePort()];
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-start-"));
  workspaces.push(root);
  const npm = spawn("npm", ["start"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${path.join(ROOT, "node_modules/.bin")}${path.delimiter}${process.env.PATH}`,
      WORKER_PORT: String(workerPort),
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_ROOT: root,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  npm.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  npm.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const urls = [
    `http://127.0.0.1:${workerPort}/healthz`,
    `http://127.0.0.1:${sandboxPort}/healthz`,
  ];
  const deadline = Date.now() + 150_000;
  while (!output.includes("Toolwire is running.")) {
    if (Date.now() > deadline || npm.exitCode !== null)
      throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const pids = descendants(npm.pid!).map((p) => p.pid);
  return { npm, urls, pids };
}

async function allGone(
  urls: string[],
  pids: number[],
): Promise<{ answering: string[]; running: number[] }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answering = (
      await Promise.all(urls.map(async (url) => ((await answers(url)) ? url : null)))
    ).filter((url): url is string => url !== null);
    const running = pids.filter(alive);
    if ((answering.length === 0 && running.length === 0) || Date.now() > deadline)
      return { answering, running };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("npm start", () => {
  it("its children end when scripts/start.ts is killed with -9", async () => {
    const { npm, urls, pids } = await npmStart();
    expect(await Promise.all(urls.map(answers))).toEqual([true, true]);
    const start = descendants(npm.pid!).find((p) => p.cmd.includes("scripts/start.ts"));
    expect(start).toBeDefined();
    process.kill(start!.pid, "SIGKILL");
    expect(await allGone(urls, pids)).toEqual({ answering: [], running: [] });
  }, 200_000);

  it("its children end when npm itself is killed with -9", async () => {
    const { npm, urls, pids } = await npmStart();
    process.kill(npm.pid!, "SIGKILL");
    expect(await allGone(urls, pids)).toEqual({ answering: [], running: [] });
  }, 200_000);
});
