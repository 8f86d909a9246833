/// <reference types="node" />
// Real sandbox hosts for the DO tests of the "workers-sandbox" project, on the ports and
// token vitest.config.ts bound into that project's Worker env, each with a temp
// workspace: "default" and "crowded" (2 commands at once, 2 more in line, 2 created
// sandboxes at most, nothing made ahead) in this process,
// and "mortal" as a child process (a test's command kills it to cut a stream mid-run).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { DEFAULT_SANDBOX_CONFIG, startSandboxHost } from "../../../../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS } from "../../../../sandbox/sandboxes/config.ts";

const ROOT = path.resolve(import.meta.dirname, "../../../..");

async function untilHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the mortal sandbox host at ${url} did not come up`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The preview tests' app, written into their sandboxes (the Workers runtime has no files).
  project.provide(
    "previewApp",
    readFileSync(path.join(ROOT, "test/support/preview-app.py"), "utf8"),
  );
  const token = process.env.TOOLWIRE_DO_SANDBOX_TOKEN ?? "";
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-do-sandbox-"));
  const host = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    token,
    port: Number(process.env.TOOLWIRE_DO_SANDBOX_PORT),
    root,
    rgPath: null,
    // Created sandboxes get their network namespace and proxy where the host can make
    // them (root, as CI runs; network.test.ts needs it). Private addresses stay off.
    egress: { ...DEFAULT_SANDBOX_CONFIG.egress, available: process.getuid?.() === 0 },
  });
  const crowdedRoot = mkdtempSync(path.join(tmpdir(), "toolwire-do-crowded-"));
  const crowded = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    token,
    port: Number(process.env.TOOLWIRE_DO_CROWDED_PORT),
    root: crowdedRoot,
    rgPath: null,
    maxRunningExecs: 2,
    maxQueuedExecs: 2,
    sandboxes: {
      dir: `${crowdedRoot}-sandboxes`,
      disk: process.getuid?.() === 0 ? "loop" : "none",
      maxSandboxes: 2,
      poolSize: 0,
      limits: { ...DEFAULT_SANDBOX_LIMITS, diskBytes: 16 * 1024 * 1024 },
    },
  });
  const mortalRoot = mkdtempSync(path.join(tmpdir(), "toolwire-do-mortal-"));
  const mortalPort = process.env.TOOLWIRE_DO_MORTAL_PORT ?? "";
  const mortal = spawn(process.execPath, [path.join(ROOT, "sandbox/main.ts")], {
    cwd: ROOT,
    env: {
      ...process.env,
      SANDBOX_TOKEN: token,
      HOST: "127.0.0.1",
      PORT: mortalPort,
      SANDBOX_ROOT: mortalRoot,
      // Unjailed on purpose: its test's command kills its own host (by the pid written
      // below), which the jail exists to prevent (test/node/sandbox/jail.test.ts).
      SANDBOX_ISOLATION: "none",
      // Nothing made ahead: a host killed with -9 would leave its ready disks mounted.
      SANDBOX_POOL_SIZE: "0",
    },
    stdio: "ignore",
  });
  await untilHealthy(`http://127.0.0.1:${mortalPort}`, mortal);
  // In its workspace, for the command that kills it: the command's parent is the host's
  // spawner, not the host (decision 259).
  writeFileSync(path.join(mortalRoot, ".host-pid"), String(mortal.pid));
  return async () => {
    if (mortal.exitCode === null && mortal.signalCode === null) mortal.kill("SIGKILL");
    await Promise.all([host.close(), crowded.close()]);
    for (const dir of [root, mortalRoot, crowdedRoot]) {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.spill`, { recursive: true, force: true });
      rmSync(`${dir}-sandboxes`, { recursive: true, force: true });
    }
  };
}
