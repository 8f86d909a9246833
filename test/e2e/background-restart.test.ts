// A background job outlives its Worker: a 60-second bash that prints every second is
// started by a pi session (the toolwire/pi extension) on a Worker of this file's own
// (`wrangler dev` with its own state, bound to the shared sandbox host), whose workerd
// is killed with SIGKILL halfway through and started again on the same state. Polled
// over HTTP after the restart, the job settles with all 60 lines; a new pi session's
// job_output reads the lines its first moment did not, each once; an MCP client sees
// the same output.
import { type ChildProcess, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, describe, expect, inject, it } from "vitest";
import { connectV2 } from "../support/e2e/mcp/clients.ts";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";
import { withoutInputLine } from "../support/input-line.ts";
import { freePort, HOST, startWranglerDev, waitUntilUp } from "../support/processes.ts";

const token = randomBytes(24).toString("base64url");
const state = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-restart-"));

/** `wrangler dev` on `port` with this file's state; resolves once it answers. */
async function startWorker(port: number, inspectorPort: number): Promise<ChildProcess> {
  const worker = startWranglerDev({
    port,
    inspectorPort,
    persistTo: state,
    vars: {
      API_TOKEN: token,
      SUBSCRIBE_SECRET: `${token}x`,
      SANDBOX_TOKEN: inject("sandboxToken"),
      SANDBOXES: JSON.stringify({ default: inject("sandboxUrl") }),
    },
  });
  await waitUntilUp(`http://${HOST}:${port}/healthz`, worker);
  return worker.child;
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
const sessions: PiSession[] = [];
afterAll(async () => {
  for (const s of sessions) s.dispose();
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
    const toolResult = (pi: PiSession) => {
      const message = pi.session.messages.find((m) => m.role === "toolResult") as unknown as {
        content: { text: string }[];
        isError: boolean;
      };
      expect(message.isError).toBe(false);
      return message.content.map((c) => c.text).join("");
    };
    const starter = await startPiSession({ url: api, token }, [
      fauxAssistantMessage(
        fauxToolCall(
          "bash",
          { command: "for i in $(seq 1 60); do echo $i; sleep 1; done", background: true },
          { id },
        ),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(fauxText("started")),
    ]);
    sessions.push(starter);
    await starter.session.prompt("start the minute-long counter in the background");
    const started = toolResult(starter);
    expect(started).toContain(`Running in the background as ${id}`);
    const shown = withoutInputLine(started.slice(0, started.lastIndexOf("[Running")));
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
    // A new pi session's job_output, after the restart, gives the lines the first moment
    // did not, once each.
    const reader = await startPiSession({ url: api, token }, [
      fauxAssistantMessage(fauxToolCall("job_output", { id }, { id: `read-${id}` }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("read")),
    ]);
    sessions.push(reader);
    await reader.session.prompt("read the counter");
    const text = toolResult(reader);
    expect(shown + withoutInputLine(text.slice(0, text.lastIndexOf("[job ")))).toBe(lines);
    expect(text).toContain("that is all of its output");
    // An MCP client of the restarted Worker sees the job ended with its output kept.
    const mcp = await connectV2(`${api}/mcp`, token);
    try {
      const killed = await mcp.call("kill", { id });
      const first = killed.content[0];
      expect(first?.type === "text" ? first.text : "").toBe(
        `${lines}[job ${id} had already ended (exited with code 0); its output is kept]`,
      );
    } finally {
      await mcp.close();
    }
  }, 240_000);
});
