// Starts the real processes end-to-end tests need: a sandbox host (its own process, a
// temp workspace, a generated token) and `wrangler dev` (offline, on free loopback
// ports, with matching secrets passed as vars), waits until both answer, provides their
// URLs and tokens to the tests, and stops both process groups afterwards.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    apiUrl: string;
    apiToken: string;
    subscribeSecret: string;
    sandboxUrl: string;
    sandboxToken: string;
    sandboxRoot: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const HOST = "127.0.0.1";

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

function start(args: string[], env: NodeJS.ProcessEnv, log: string[]): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString());
    if (log.length > 200) log.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return child;
}

async function waitFor(url: string, child: ChildProcess, log: string[]): Promise<void> {
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not come up:\n${log.join("").slice(-4000)}`);
}

function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, 5000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sandboxRoot = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-ws-"));
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-state-"));
  const secret = () => randomBytes(24).toString("base64url");
  const apiToken = secret();
  const subscribeSecret = secret();
  const sandboxToken = secret();
  const [sandboxPort, workerPort, inspectorPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const sandboxUrl = `http://${HOST}:${sandboxPort}`;
  const apiUrl = `http://${HOST}:${workerPort}`;

  const sandboxLog: string[] = [];
  const sandbox = start(
    [path.join(ROOT, "sandbox/main.ts")],
    { SANDBOX_TOKEN: sandboxToken, HOST, PORT: String(sandboxPort), SANDBOX_ROOT: sandboxRoot },
    sandboxLog,
  );
  const workerLog: string[] = [];
  const worker = start(
    [
      path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--ip",
      HOST,
      "--port",
      String(workerPort),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
      "--var",
      `API_TOKEN:${apiToken}`,
      "--var",
      `SUBSCRIBE_SECRET:${subscribeSecret}`,
      "--var",
      `SANDBOX_TOKEN:${sandboxToken}`,
      "--var",
      `SANDBOXES:${JSON.stringify({ default: sandboxUrl })}`,
      // /mcp keep-alive comments every second: under wrangler dev a write is how a closed
      // 2026-07-28 stream is noticed (and cancelled), so the e2e tests see it quickly.
      "--var",
      "MCP_KEEPALIVE_SECONDS:1",
    ],
    { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
    workerLog,
  );

  const teardown = async () => {
    await Promise.all([stopGroup(worker), stopGroup(sandbox)]);
    rmSync(sandboxRoot, { recursive: true, force: true });
    rmSync(`${sandboxRoot}.spill`, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await Promise.all([
      waitFor(`${sandboxUrl}/healthz`, sandbox, sandboxLog),
      waitFor(`${apiUrl}/healthz`, worker, workerLog),
    ]);
  } catch (err) {
    await teardown();
    throw err;
  }

  project.provide("apiUrl", apiUrl);
  project.provide("apiToken", apiToken);
  project.provide("subscribeSecret", subscribeSecret);
  project.provide("sandboxUrl", sandboxUrl);
  project.provide("sandboxToken", sandboxToken);
  project.provide("sandboxRoot", sandboxRoot);
  return teardown;
}
