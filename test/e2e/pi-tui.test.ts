// pi's interactive TUI under tmux, with a faux provider from a test extension and the
// toolwire/pi extension: while the remote command runs its lines appear on screen (two
// readings a second apart, the second with more tick lines), and Esc cancels it.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { EXTENSION_PATH } from "./pi/session.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FAUX = path.join(import.meta.dirname, "pi/faux-tui-extension.ts");
const PI = path.join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const session = `toolwire-pi-${process.pid}`;
const callId = `tui-${Date.now().toString(36)}`;
const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
const screen = () => tmux("capture-pane", "-p", "-t", session);
const ticks = (text: string) => (text.match(/tick \d+/g) ?? []).length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen; screen:\n${screen()}`);
    await sleep(250);
  }
}

afterAll(() => {
  try {
    tmux("kill-session", "-t", session);
  } catch {}
});

it("shows the remote lines while the command runs, and Esc cancels it", async () => {
  const cwd = mkdtempSync(path.join(tmpdir(), "toolwire-pi-tui-"));
  const agentDir = mkdtempSync(path.join(tmpdir(), "toolwire-pi-tui-agent-"));
  const env = [
    `TOOLWIRE_URL=${inject("apiUrl")}`,
    `TOOLWIRE_TOKEN=${inject("apiToken")}`,
    `TOOLWIRE_TUI_CALL_ID=${callId}`,
    `PI_CODING_AGENT_DIR=${agentDir}`,
    "PI_OFFLINE=1",
  ];
  const command = [
    "env",
    ...env,
    process.execPath,
    PI,
    "--offline",
    "--no-session",
    "-e",
    FAUX,
    "-e",
    EXTENSION_PATH,
    "--model",
    "toolwire-faux/scripted",
  ];
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "160",
    "-y",
    "50",
    "-c",
    cwd,
    command.map((a) => `'${a}'`).join(" "),
  );
  await until("pi's prompt", () => screen().includes("scripted"), 60_000);
  tmux("send-keys", "-t", session, "count", "Enter");
  await until("the first tick lines", () => ticks(screen()) > 0, 60_000);
  const first = screen();
  await sleep(1000);
  const second = screen();
  expect(ticks(second)).toBeGreaterThan(ticks(first));

  tmux("send-keys", "-t", session, "Escape");
  const poll = await api.result(callId, { wait: 20 });
  if (poll.status !== "settled") throw new Error("the call did not settle after Esc");
  expect(poll.result.isError).toBe(true);
  const text = poll.result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  expect(text).toContain("tick 1\n");
  expect(text).not.toContain("tick 600");
}, 180_000);
