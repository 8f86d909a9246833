// A background job outlives its Worker: a 60-second bash that prints every second is
// started on a Worker of this file's own (`wrangler dev` with its own state, bound to
// the shared sandbox host), whose workerd is killed with SIGKILL halfway through and
// started again on the same state. Polled after the restart, the job settles with all
// 60 lines, and job_output reads them, each once.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const HOST = "127.0.0.1";
const token = randomBytes(24).toString("base64url");
const state = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-restart-"));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `wrangler dev` on `port` with this file's state; resolves once it answers. */
async function startWorker(port: number, inspector: number): Promise<ChildProcess> {
  const log: string[] = [];
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      ...["--ip", HOST, "--port", String(port), "--inspector-port", String(inspector)],
      ...["--persist-to", state, "--show-interactive-dev-session=false"],
      ...["--var", `API_TOKEN:${token}`, "--var", `SUBSCRIBE_SECRET:${token}x`],
      ...["--var", `SANDBOX_TOKEN:${inject("sandboxToken")}`],
      ...["--var", `SANDBOXES:${JSON.stringify({ default: inject("sandboxUrl") })}`],
    ],
    {
      cwd: ROOT,
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString());
    if (log.length > 200) log.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`http://${HOST}:${port}/healthz`)).ok) return child;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`wrangler dev did not come up:\n${log.join("").slice(-4000)}`);
}

/** SIGKILL to every process of the worker's group (wrangler and its workerd). */
function killNine(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const workerd = execFileSync("pgrep", ["-g", String(child.pid), "workerd"])
    .toString()
    .trim();
  expect(workerd).not.toBe("");
  process.kill(-child.pid!, "SIGKILL");
  return exited;
}

let worker: ChildProcess | null = null;
afterAll(async () => {
  if (worker?.pid && worker.exitCode === null) {
    try {
      process.kill(-worker.pid, "SIGKILL");
    } catch {}
  }
  rmSync(state, { recursive: true, force: true });
});

describe("a background job and kill -9 of workerd", () => {
  it("a 60-second job printing every second survives; after the restart it settles with all 60 lines", async () => {
    const [port, inspector] = [await freePort(), await freePort()];
    const api = `http://${HOST}:${port}`;
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${api}${url}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    worker = await startWorker(port, inspector);
    const id = `restart-${Date.now()}`;
    const started = await call("POST", "/v1/invocations", {
      tool: "bash",
      toolCallId: id,
      args: { command: "for i in $(seq 1 60); do echo $i; sleep 1; done", background: true },
    });
    expect(started.status).toBe("running");
    expect((started.firstMoment as { note: string }).note).toContain(
      `Running in the background as ${id}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    await killNine(worker);
    worker = await startWorker(port, inspector);
    // 200 with the settled result; 202 { status: "running" } while it runs.
    let poll: Record<string, unknown> = { status: "running" };
    for (let i = 0; i < 10 && poll.status === "running"; i++) {
      poll = await call("GET", `/v1/invocations/${id}/result?wait=30`);
    }
    const result = poll as {
      isError: boolean;
      content: Array<{ text: string }>;
      truncation: { totalLines: number };
    };
    expect(result.isError).toBe(false);
    expect(result.truncation.totalLines).toBe(60);
    const lines = Array.from({ length: 60 }, (_, i) => `${i + 1}\n`).join("");
    expect(result.content[0]?.text).toBe(lines);
    // job_output, after the restart, gives the lines its first moment did not, once each.
    const read = await call("POST", "/v1/invocations", {
      tool: "job_output",
      toolCallId: `read-${id}`,
      args: { id },
    });
    const answer = await call("GET", `/v1/invocations/${read.id}/result?wait=30`);
    const text = (answer as { content: Array<{ text: string }> }).content[0]!.text;
    const shown = (started.firstMoment as { text: string }).text;
    expect(shown + text.slice(0, text.lastIndexOf("[job "))).toBe(lines);
    expect(text).toContain("that is all of its output");
  }, 240_000);
});
