// `npm start` as a user runs it, on free loopback ports with a fresh, empty workspace:
// shared by the tests of npm start itself and of the README run against it.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../../..");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface NpmStart {
  npm: ChildProcess;
  workerPort: number;
  /** The healthz URLs of the Worker and the sandbox host. */
  urls: string[];
  /** Its SANDBOX_ROOT, a temp folder of its own: the caller removes it. */
  root: string;
  /** What it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * Runs `npm start` and resolves once it printed "Toolwire is running.", within 150 s.
 * @example const { npm, root } = await npmStart(); … npm.kill("SIGINT");
 */
export async function npmStart(): Promise<NpmStart> {
  const [workerPort, sandboxPort] = [await freePort(), await freePort()];
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-start-"));
  const npm = spawn("npm", ["start"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${path.join(ROOT, "node_modules/.bin")}${path.delimiter}${process.env.PATH}`,
      WORKER_PORT: String(workerPort),
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_ROOT: root,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  npm.stdout?.on("data", collect);
  npm.stderr?.on("data", collect);
  const urls = [
    `http://127.0.0.1:${workerPort}/healthz`,
    `http://127.0.0.1:${sandboxPort}/healthz`,
  ];
  const deadline = Date.now() + 150_000;
  while (!output.includes("Toolwire is running.")) {
    if (Date.now() > deadline || npm.exitCode !== null)
      throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { npm, workerPort, urls, root, output: () => output };
}
