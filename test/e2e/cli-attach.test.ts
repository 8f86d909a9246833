// Decision 191: `toolwire attach` and `toolwire run bash --tty` in a person's terminal,
// under tmux, against the e2e stack: the call's screen is drawn, keys reach it (the
// model is told a person typed), a resize of the person's window resizes the call's
// terminal, Ctrl-] detaches leaving the call running at its own size, the person's
// terminal is given back, and a call that ends ends attach with its status.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TOOLWIRE_BIN } from "../support/e2e/toolwire-cli.ts";

const api = inject("apiUrl");
const token = inject("apiToken");
const bearer = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const tag = `att${Date.now().toString(36)}`;
/** A tmux server of the test's own, so no other tmux session is touched. */
const socket = `toolwire-${tag}`;
const { TMUX: _inside, ...outsideTmux } = process.env;
const tmux = (...args: string[]) =>
  execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: outsideTmux });
const screen = (session: string) => tmux("capture-pane", "-p", "-t", session);

async function until(session: string, what: string, check: (text: string) => boolean) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const text = screen(session);
    if (check(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; the screen:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function call(method: string, url: string, body?: unknown) {
  const res = await fetch(`${api}${url}`, {
    method,
    headers: bearer,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function runTool(tool: string, args: unknown) {
  const created = await call("POST", "/v1/invocations", { tool, args });
  const settled = await call("GET", `/v1/invocations/${created.body.id}/result?wait=30`);
  return (settled.body as { content: { text: string }[] }).content[0]?.text ?? "";
}

/** Starts `toolwire <args>` in a new tmux session of 100×30; the shell prints EXIT=<status> after it. */
function startCli(session: string, args: string) {
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "100",
    "-y",
    "30",
    "-e",
    `TOOLWIRE_URL=${api}`,
    "-e",
    `TOOLWIRE_TOKEN=${token}`,
    "-e",
    "USER=tester",
    `sh -c '${TOOLWIRE_BIN} ${args}; echo EXIT=$?; sleep 600'`,
  );
}

const paintSize = async (id: string) => {
  const paint = await call("GET", `/v1/invocations/${id}/terminal`);
  return { cols: paint.body.cols, rows: paint.body.rows };
};

beforeAll(() => {
  try {
    execFileSync("tmux", ["-V"]);
  } catch {
    throw new Error(
      "the attach test drives toolwire under tmux: install it (apt-get install tmux)",
    );
  }
});
afterAll(() => {
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
});

describe("toolwire attach under tmux", () => {
  it("draws the prompt, types as the person, follows a resize, and Ctrl-] detaches leaving the call at its own size", async () => {
    const created = await call("POST", "/v1/invocations", {
      tool: "bash",
      args: {
        command: `read -p 'Name? ' n; echo "hello $n"; read -p 'More? ' m; echo "bye $m"`,
        tty: true,
        cols: 60,
        rows: 20,
      },
    });
    const id = created.body.id as string;
    startCli(`${tag}-a`, `attach ${id} --as bob`);
    await until(`${tag}-a`, "the prompt drawn", (s) => s.includes("Name?"));
    // The screen is the call's; the window's title says how to leave.
    expect(tmux("display-message", "-p", "-t", `${tag}-a`, "#{pane_title}")).toContain(
      `toolwire: ${id} as bob · Ctrl-] detaches`,
    );
    // Attached, the call's terminal has the person's size (tmux's 100×30).
    await expect.poll(() => paintSize(id), { timeout: 10_000 }).toEqual({ cols: 100, rows: 30 });
    tmux("send-keys", "-t", `${tag}-a`, "Ada", "Enter");
    await until(`${tag}-a`, "the answer", (s) => s.includes("hello Ada") && s.includes("More?"));
    const read = await runTool("job_output", { id });
    expect(read).toContain(
      "[a person typed into this terminal since your last read: bob (4 bytes)",
    );
    tmux("resize-window", "-t", `${tag}-a`, "-x", "90", "-y", "25");
    await expect.poll(() => paintSize(id), { timeout: 10_000 }).toEqual({ cols: 90, rows: 25 });
    tmux("send-keys", "-t", `${tag}-a`, "C-]");
    const after = await until(`${tag}-a`, "the detach", (s) => s.includes("EXIT="));
    expect(after).toContain("EXIT=0");
    expect(after).toContain(`detached; ${id} runs on`);
    // The call runs on, at its own size again.
    expect(await paintSize(id)).toEqual({ cols: 60, rows: 20 });
    await runTool("write_stdin", { id, text: "x\n" });
  });

  it("attach without a terminal is a usage error, naming watch", async () => {
    const out = execFileSync(
      "sh",
      ["-c", `${TOOLWIRE_BIN} attach call_none < /dev/null 2>&1; echo EXIT=$?`],
      {
        encoding: "utf8",
        env: { ...outsideTmux, TOOLWIRE_URL: api, TOOLWIRE_TOKEN: token },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    expect(out).toContain("EXIT=2");
    expect(out).toContain("attach needs a terminal");
    expect(out).toContain("toolwire watch");
  });
});

describe("toolwire run bash --tty under tmux", () => {
  it("is interactive at the person's size, and exits with the command's status", async () => {
    startCli(`${tag}-r`, `run bash --command "stty size; read -p \\"code? \\" c; exit \\$c" --tty`);
    const drawn = await until(`${tag}-r`, "the prompt", (s) => s.includes("code?"));
    // `stty size` in the call: rows and columns of the person's terminal.
    expect(drawn).toContain("30 100");
    tmux("send-keys", "-t", `${tag}-r`, "7", "Enter");
    const end = await until(`${tag}-r`, "the exit", (s) => s.includes("EXIT="));
    expect(end).toContain("EXIT=7");
    expect(end).toContain("failed (exit 7)");
  });
});
