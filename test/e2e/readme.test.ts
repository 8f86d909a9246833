// The README as a newcomer pastes it: its shell blocks, in order, in one bash, against a
// fresh `npm start` with an empty workspace, from a folder that holds what the clone
// gives (`.dev.vars`, `node_modules`, `package.json`, `bin`). The one change made to the
// text: the Worker's port, 8787, becomes the free port this npm start listens on. Any
// command that exits non-zero fails the test (`set -e`).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type NpmStart, npmStart, ROOT } from "../support/e2e/npm-start.ts";

/** Blocks CI cannot run, each with why; any other block runs. */
const SKIPPED: { marker: string; why: string }[] = [
  {
    marker: "npm install",
    why: "npm install, npm start and npm test are what CI itself runs around this test",
  },
  { marker: "claude mcp add", why: "needs Anthropic's claude CLI (MCP is tested in mcp.test.ts)" },
  { marker: "npx pi -e", why: "needs a model's API key and a terminal (pi-tui.test.ts runs pi)" },
  {
    marker: "container/build-image.ts",
    why: "needs Docker and a Debian mirror (test/containers runs the container backend)",
  },
];

const blocks = [
  ...readFileSync(path.join(ROOT, "README.md"), "utf8").matchAll(/```sh\n([\s\S]*?)```/g),
].map((m) => m[1] ?? "");

let started: NpmStart | null = null;
const dirs: string[] = [];
afterAll(async () => {
  if (started && started.npm.exitCode === null) {
    // kill -9 of npm ends its children too (scripts/start.ts watches its parent; start.test.ts
    // holds that): wait until neither answers.
    started.npm.kill("SIGKILL");
    const deadline = Date.now() + 15_000;
    for (const url of started.urls) {
      while (Date.now() < deadline && (await answers(url))) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
  for (const dir of dirs) await removeWhenFree(dir);
});

/**
 * Removes a workspace the host mounted `nosuid` (decision 240): the host lets the mount go
 * just after it stops answering, so a removal at once can meet it still mounted (EBUSY).
 * One the host never let go (it was killed first) is unmounted here.
 */
async function removeWhenFree(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EBUSY") throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const mounts = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((point) => point === dir || point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) execFileSync("umount", ["-l", point]);
  rmSync(dir, { recursive: true, force: true });
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

function bash(script: string, cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-e", "-c", script], {
      cwd,
      env: {
        ...process.env,
        PATH: `${path.join(ROOT, "node_modules/.bin")}${path.delimiter}${process.env.PATH}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      output += c.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("README", () => {
  it("skips only the blocks it names, each for a reason CI lacks", () => {
    const skipped = blocks.filter((b) => SKIPPED.some((s) => b.includes(s.marker)));
    expect(skipped).toHaveLength(SKIPPED.length);
  });

  it("its shell blocks run pasted, in order, against a fresh npm start", async () => {
    started = await npmStart();
    dirs.push(started.root);
    const clone = mkdtempSync(path.join(tmpdir(), "toolwire-readme-"));
    dirs.push(clone);
    for (const name of [".dev.vars", "node_modules", "package.json", "bin"]) {
      symlinkSync(path.join(ROOT, name), path.join(clone, name));
    }
    const port = String(started.workerPort);
    const script = blocks
      .map((text, k) => ({ text, k }))
      .filter(({ text }) => !SKIPPED.some((s) => text.includes(s.marker)))
      .map(
        ({ text, k }) =>
          `echo "::block ${k}"\n${text.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`)}`,
      )
      .join("\n");
    const run = await bash(script, clone);
    expect(run.code, run.output.slice(-3000)).toBe(0);
    // The first example's complete output is the whole of it; the sandbox block made one.
    expect(run.output).toMatch(/sbx_default_\w+/);
    expect(run.output).toContain("The whole output: toolwire output build-call_");
  }, 240_000);
});
