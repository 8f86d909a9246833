// The real `pi` CLI, interactive, under tmux, with the toolwire/pi extension and a faux
// model from a test extension (test/support/e2e/pi/faux-provider.ts): the remote bash result is
// on the screen, `/toolwire` names the sandbox, a running command's lines move on the
// screen while it runs, and Esc cancels it in the sandbox.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { EXTENSION_PATH } from "../support/e2e/pi/session.ts";

const PI_CLI = path.resolve(
  import.meta.dirname,
  "../../node_modules/@mariozechner/pi-coding-agent/dist/cli.js",
);
const FAUX_EXTENSION = path.resolve(import.meta.dirname, "../support/e2e/pi/faux-provider.ts");
const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const run = `pitui${Date.now().toString(36)}`;
/** A tmux server of the test's own, so no other tmux session is touched. */
const socket = `toolwire-${run}`;
const marker = `${run}.marker`;

/** Without `TMUX`, so the test also runs from inside a tmux session. */
const { TMUX: _inside, ...outsideTmux } = process.env;
const tmux = (...args: string[]) =>
  execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: outsideTmux });
const screen = () => tmux("capture-pane", "-p", "-t", run);

async function until(what: string, check: (text: string) => boolean, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = screen();
    if (check(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; the screen:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How many of the command's lines pi has shown: those on screen and the "N earlier lines" folded. */
const linesShown = (text: string) =>
  Number(/\.\.\. \((\d+) earlier lines/.exec(text)?.[1] ?? 0) +
  (text.match(/^ tick \d+$/gm) ?? []).length;

/** The highest `tick N` on the screen. */
const lastTick = (text: string) =>
  Math.max(0, ...[...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));

let scratch: string;
/** pi's own working directory: stays empty, the commands run in the sandbox. */
let cwd: string;
beforeAll(() => {
  try {
    execFileSync("tmux", ["-V"]);
  } catch {
    throw new Error("the TUI test runs pi under tmux: install it (apt-get install tmux)");
  }
  scratch = mkdtempSync(path.join(tmpdir(), "toolwire-pi-tui-"));
  const script = path.join(scratch, "script.json");
  writeFileSync(
    script,
    JSON.stringify([
      {
        tool: "bash",
        args: { command: `for i in 1 2 3; do echo tui line $i; sleep 0.2; done; echo DONE-${run}` },
        id: `${run}-quick`,
      },
      { text: "the quick command finished" },
      {
        tool: "bash",
        args: {
          command: `for i in $(seq 1 100000); do echo tick $i; echo $i > ${marker}.new; mv ${marker}.new ${marker}; sleep 0.05; done`,
        },
        id: `${run}-slow`,
      },
      { text: "not reached: Esc stops the turn" },
    ]),
  );
  cwd = path.join(scratch, "cwd");
  execFileSync("mkdir", [cwd, path.join(scratch, "agent")]);
  tmux(
    "new-session",
    "-d",
    "-s",
    run,
    "-x",
    "160",
    "-y",
    "50",
    "-c",
    cwd,
    "-e",
    `TOOLWIRE_URL=${inject("apiUrl")}`,
    "-e",
    `TOOLWIRE_TOKEN=${inject("apiToken")}`,
    "-e",
    "TOOLWIRE_SANDBOX=default",
    "-e",
    `TOOLWIRE_TEST_FAUX_SCRIPT=${script}`,
    "-e",
    `PI_CODING_AGENT_DIR=${path.join(scratch, "agent")}`,
    "-e",
    "PI_OFFLINE=1",
    process.execPath,
    PI_CLI,
    "--no-session",
    "--no-extensions",
    "--no-skills",
    "--no-context-files",
    "--no-prompt-templates",
    "--no-themes",
    "-e",
    EXTENSION_PATH,
    "-e",
    FAUX_EXTENSION,
    "--provider",
    "faux",
    "--model",
    "faux-1",
  );
});

afterAll(() => {
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("pi's TUI on Toolwire, under tmux", () => {
  it("shows the remote bash result, and /toolwire names the sandbox", async () => {
    await until("pi to start with the faux model", (s) => s.includes("faux-1"));
    tmux("send-keys", "-t", run, "run the quick command", "Enter");
    const shown = await until(
      "the remote result and the model's answer",
      (s) => s.includes(`DONE-${run}`) && s.includes("the quick command finished"),
    );
    expect(shown).toContain("tui line 3");
    const poll = await api.result(`${run}-quick`, { wait: 10 });
    if (poll.status !== "settled") throw new Error("the quick command did not settle");
    expect(JSON.stringify(poll.result.content)).toContain(`DONE-${run}`);
    expect(readdirSync(cwd)).toEqual([]);

    // Once in the status line before; the notice makes it twice (it wraps before the link).
    const where = `toolwire: sandbox "default" at ${inject("apiUrl")} · run`;
    expect(screen().split(where)).toHaveLength(2);
    tmux("send-keys", "-t", run, "/toolwire", "Enter");
    const status = await until("/toolwire's answer", (s) => s.split(where).length > 2);
    expect(status).toMatch(/toolwire: sandbox "default" at \S+ · run http:\/\/\S+\/run\//);
  });

  it("a running command's lines move on the screen, and Esc cancels it in the sandbox", async () => {
    tmux("send-keys", "-t", run, "count slowly", "Enter");
    const first = await until("the first ticks", (s) => lastTick(s) >= 3);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const second = screen();
    // About 20 lines a second; "more" is all a loaded machine can promise.
    expect(linesShown(second)).toBeGreaterThan(linesShown(first));
    expect(lastTick(second)).toBeGreaterThan(lastTick(first));

    tmux("send-keys", "-t", run, "Escape");
    const poll = await api.result(`${run}-slow`, { wait: 20 });
    if (poll.status !== "settled") throw new Error("the cancelled command did not settle");
    expect(poll.result.isError).toBe(true);
    expect(JSON.stringify(poll.result.content)).toContain("tick 1\\n");
    const markerPath = path.join(inject("sandboxRoot"), marker);
    const stoppedAt = Number(readFileSync(markerPath, "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(Number(readFileSync(markerPath, "utf8"))).toBe(stoppedAt);
    expect(screen()).not.toContain("not reached");
  });
});
