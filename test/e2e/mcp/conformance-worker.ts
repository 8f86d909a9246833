// Starts the conformance Worker (test/mcp-conformance/wrangler.toml: the production app
// plus the suite's fixture tools) under `wrangler dev` on free loopback ports, and stops
// its process group afterwards.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../../..");
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

export interface RunningWorker {
  url: string;
  stop(): Promise<void>;
}

/** `wrangler dev -c test/mcp-conformance/wrangler.toml`, answering at `url`. */
export async function startConformanceWorker(): Promise<RunningWorker> {
  const [port, inspector] = [await freePort(), await freePort()];
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-mcp-conformance-"));
  const secret = () => randomBytes(24).toString("base64url");
  const log: string[] = [];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "-c",
      "test/mcp-conformance/wrangler.toml",
      "--ip",
      HOST,
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
      "--var",
      `API_TOKEN:${secret()}`,
      "--var",
      `SUBSCRIBE_SECRET:${secret()}`,
      "--var",
      `SANDBOX_TOKEN:${secret()}`,
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
  const stop = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        rmSync(state, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const kill = setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {}
      }, 5000);
      child.once("exit", () => {
        clearTimeout(kill);
        done();
      });
      process.kill(-child.pid!, "SIGTERM");
    });
  const url = `http://${HOST}:${port}`;
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url: `${url}/mcp`, stop };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`the conformance Worker did not come up:\n${log.join("").slice(-4000)}`);
}
