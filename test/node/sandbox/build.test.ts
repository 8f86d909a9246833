import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSandboxHost } from "../../../sandbox/build.ts";
import { SandboxClient } from "../../../src/execenv/index.ts";
import { execId, fold, sha256OfCommand, sha256OfFile, spillOnHost } from "./harness.ts";

describe("the deployment bundle (npm run build:sandbox)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-bundle-"));
  const root = path.join(dir, "workspace");
  let child: ChildProcess;
  let client: SandboxClient;

  beforeAll(async () => {
    const bundle = path.join(dir, "host.mjs");
    await buildSandboxHost(bundle);
    const token = randomBytes(24).toString("hex");
    child = spawn(process.execPath, [bundle], {
      env: { PATH: process.env.PATH, SANDBOX_TOKEN: token, PORT: "0", SANDBOX_ROOT: root },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (text: string) => {
        const m = /listening on (http:\/\/\S+)/.exec(text);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`bundled host exited (${code})`)));
    });
    client = new SandboxClient(url, token);
  });

  afterAll(async () => {
    // The host unmounts its workspace's nosuid bind as it stops (decision 240).
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs as one file with plain node: bounded view, exact totals, complete spill", async () => {
    const f = await fold(client.exec({ execId: execId(), command: "seq 1 200000" }));
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(f.metadata).toMatchObject({ truncated: true, totalLines: 200000, totalBytes: 1288895 });
    expect(f.text.endsWith("199999\n200000\n")).toBe(true);
    expect(
      await sha256OfFile(spillOnHost({ spillDir: `${root}.spill` }, f.metadata!.spillPath!)),
    ).toBe(sha256OfCommand("seq 1 200000"));
  });

  it("answers a tty call with a clear error where node-pty is not installed beside it", async () => {
    const f = await fold(
      client.exec({ execId: execId(), command: "echo never", tty: { cols: 80, rows: 24 } }),
    );
    expect(JSON.stringify(f)).toContain(
      "this sandbox host cannot open terminals: its optional dependency @lydell/node-pty is not installed",
    );
    expect(f.text).not.toContain("never");
    // The host still runs pipe calls.
    const after = await fold(client.exec({ execId: execId(), command: "echo still here" }));
    expect(after.text).toBe("still here\n");
  });
});
