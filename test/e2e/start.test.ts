// `npm start` as a user runs it: its children (the sandbox host, wrangler dev and its
// workerd) end when it dies, also by kill -9 of npm or of scripts/start.ts itself.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, npmStart, ROOT } from "../support/e2e/npm-start.ts";

const workspaces: string[] = [];
afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
});

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

/** `npm start` on free ports, once both its children answer, and the processes it started. */
async function npmStartWithPids(): Promise<{ npm: ChildProcess; urls: string[]; pids: number[] }> {
  const { npm, urls, root } = await npmStart();
  workspaces.push(root);
  return { npm, urls, pids: descendants(npm.pid!).map((p) => p.pid) };
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
    const { npm, urls, pids } = await npmStartWithPids();
    expect(await Promise.all(urls.map(answers))).toEqual([true, true]);
    const start = descendants(npm.pid!).find((p) => p.cmd.includes("scripts/start.ts"));
    expect(start).toBeDefined();
    process.kill(start!.pid, "SIGKILL");
    expect(await allGone(urls, pids)).toEqual({ answering: [], running: [] });
  }, 200_000);

  it("a port in use stops it at once, naming the port and the variable that moves it", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const taken = (holder.address() as { port: number }).port;
    try {
      for (const name of ["WORKER_PORT", "SANDBOX_PORT"]) {
        const other = name === "WORKER_PORT" ? "SANDBOX_PORT" : "WORKER_PORT";
        const start = spawn(process.execPath, [path.join(ROOT, "scripts/start.ts")], {
          cwd: ROOT,
          env: { ...process.env, [name]: String(taken), [other]: String(await freePort()) },
          stdio: ["ignore", "ignore", "pipe"],
        });
        let stderr = "";
        start.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        const code = await new Promise((resolve) => start.once("exit", resolve));
        expect([code, stderr]).toEqual([
          1,
          `Port ${taken} on 127.0.0.1 is in use (${name}); stop what uses it, or pick another port: ${name}=${taken + 10} npm start\n`,
        ]);
      }
    } finally {
      holder.close();
    }
  });

  it("a sandbox host that dies is started again and says so; the Worker stays, and the next call works (decision 247)", async () => {
    const started = await npmStart();
    workspaces.push(started.root);
    const { npm, urls, workerPort } = started;
    try {
      const host = descendants(npm.pid!).find((p) => p.cmd.includes("sandbox/main.ts"));
      expect(host).toBeDefined();
      process.kill(host!.pid, "SIGKILL");
      const deadline = Date.now() + 60_000;
      while (!/sandbox host is back at/.test(started.output()) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(started.output()).toMatch(
        /sandbox host exited \(signal SIGKILL\); starting it again .*The Worker keeps running\./,
      );
      expect(await Promise.all(urls.map(answers))).toEqual([true, true]);
      const token = /^API_TOKEN="?([^"\n]+)"?$/m.exec(
        readFileSync(path.join(ROOT, ".dev.vars"), "utf8"),
      )?.[1];
      const res = await fetch(`http://127.0.0.1:${workerPort}/v1/invocations`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool: "bash", args: { command: "echo after-restart" } }),
        signal: AbortSignal.timeout(30_000),
      });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      const result = (await (
        await fetch(`http://127.0.0.1:${workerPort}/v1/invocations/${id}/result?wait=30`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(40_000),
        })
      ).json()) as { isError: boolean; content: { text: string }[] };
      expect(result.isError).toBe(false);
      expect(result.content[0]?.text).toBe("after-restart\n");
    } finally {
      // Ctrl-C as a terminal sends it: to scripts/start.ts, which stops both children.
      const start = descendants(npm.pid!).find((p) => p.cmd.startsWith("node scripts/start.ts"));
      if (start) process.kill(start.pid, "SIGINT");
      await new Promise((resolve) => npm.once("exit", resolve));
    }
  }, 200_000);

  it("its children end when npm itself is killed with -9", async () => {
    const { npm, urls, pids } = await npmStartWithPids();
    process.kill(npm.pid!, "SIGKILL");
    expect(await allGone(urls, pids)).toEqual({ answering: [], running: [] });
  }, 200_000);
});
