// A terminal outlives its Worker, and pi drives it: a pi session (the toolwire/pi
// extension, a scripted faux model) starts an npm-init-style prompt under a terminal on a
// Worker of this file's own (`wrangler dev` with its own state, bound to the shared
// sandbox host); its workerd is killed with SIGKILL and started again on the same state;
// a new pi session answers both questions with write_stdin, and the call ends with the
// file the answers made. docs/steering.md#interactive-commands-tty-write_stdin.
import { type ChildProcess, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";
import { freePort, HOST, startWranglerDev, waitUntilUp } from "../support/processes.ts";

const token = randomBytes(24).toString("base64url");
const state = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-tty-restart-"));

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
  expect(
    execFileSync("pgrep", ["-g", String(child.pid), "workerd"])
      .toString()
      .trim(),
  ).not.toBe("");
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

/** The text of every tool result of a session, in order. */
function toolResults(pi: PiSession): string[] {
  return pi.session.messages
    .filter((m) => m.role === "toolResult")
    .map((m) =>
      (m as unknown as { content: { text: string }[] }).content.map((c) => c.text).join(""),
    );
}

const SCRIPT = [
  "read -p 'package name: ' name",
  "read -p 'version: (1.0.0) ' version",
  `printf '{"name":"%s","version":"%s"}\\n' "$name" "\${version:-1.0.0}" | tee package-$$.json`,
].join("; ");

describe("a terminal, pi and kill -9 of workerd", () => {
  it("pi answers an npm-init-style prompt with write_stdin across a Worker restart", async () => {
    const [port, inspector] = [await freePort(), await freePort()];
    const api = `http://${HOST}:${port}`;
    worker = await startWorker(port, inspector);
    const id = `tty-restart-${Date.now()}`;
    const starter = await startPiSession({ url: api, token }, [
      fauxAssistantMessage(fauxToolCall("bash", { command: SCRIPT, tty: true }, { id }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("asked")),
    ]);
    sessions.push(starter);
    await starter.session.prompt("start npm init");
    expect(toolResults(starter)[0]).toContain('[waiting for input: "package name:"');

    await killNine(worker);
    worker = await startWorker(port, inspector);

    const answerer = await startPiSession({ url: api, token }, [
      fauxAssistantMessage(
        fauxToolCall("write_stdin", { id, text: "demo\n" }, { id: `${id}-name` }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(
        fauxToolCall("write_stdin", { id, keys: ["Enter"] }, { id: `${id}-version` }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(fauxText("answered")),
    ]);
    sessions.push(answerer);
    await answerer.session.prompt("answer the questions");
    const [name, version] = toolResults(answerer);
    expect(name).toContain('[waiting for input: "version: (1.0.0)"');
    expect(version).toContain('{"name":"demo","version":"1.0.0"}');
    expect(version).toContain("exited with code 0");
  }, 180_000);
});
