/**
 * A real sandbox host for a test's global setup (docs/testing.md): the host that
 * `npm start` runs, as its own child process, on a free loopback port. It jails
 * commands with bubblewrap where bubblewrap works and otherwise runs them without
 * isolation, with a warning that names the package to install, as `npm start` does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where the package keeps the bundled host, beside this module's folder. */
const HOST_BUNDLE = fileURLToPath(new URL("../sandbox-host/main.mjs", import.meta.url));

export interface SandboxHostOptions {
  /** The default workspace; a new temporary folder (removed by `stop`) when absent. */
  root?: string;
  /** The bearer token the Worker sends it (`SANDBOX_TOKEN`); a random one when absent. */
  token?: string;
  /** `bwrap` refuses to start without a working jail; `none` never jails; `auto` (default) jails where it can. */
  isolation?: "auto" | "bwrap" | "none";
  /** Loopback port; a free one when absent. */
  port?: number;
  /** More of the host's settings (docs/operations.md), e.g. `SANDBOX_MAX_RUNNING_EXECS`. */
  env?: Record<string, string>;
}

export interface StartedSandboxHost {
  /** Base URL, e.g. `http://127.0.0.1:40123`: the Worker's `SANDBOXES` names it. */
  url: string;
  /** The token the Worker must send (its `SANDBOX_TOKEN`). */
  token: string;
  /** The default workspace. */
  root: string;
  /** Whether commands run in a jail. */
  isolation: "bwrap" | "none";
  /** What the host said an operator should know (isolation off, limits that cannot hold). */
  warnings: string[];
  /** Stops the host (its commands with it) and removes a workspace it made. */
  stop(): Promise<void>;
}

/**
 * Starts a sandbox host and resolves once it answers.
 * @example
 * const host = await startSandboxHost();
 * // Worker bindings: SANDBOXES = JSON.stringify({ default: host.url }), SANDBOX_TOKEN = host.token
 * await host.stop();
 */
export async function startSandboxHost(
  options: SandboxHostOptions = {},
): Promise<StartedSandboxHost> {
  const madeRoot = options.root === undefined;
  const root = options.root ?? mkdtempSync(path.join(tmpdir(), "toolwire-sandbox-"));
  const token = options.token ?? randomBytes(24).toString("base64url");
  const wanted = options.isolation ?? "auto";
  const attempt = (isolation: "bwrap" | "none") =>
    launch({ ...options, root, token }, isolation, madeRoot);
  if (wanted !== "auto") return attempt(wanted);
  try {
    return await attempt("bwrap");
  } catch (err) {
    if (!(err instanceof JailUnavailable)) throw err;
    const host = await attempt("none");
    host.warnings.unshift(
      `bubblewrap does not work here (${err.message}): this test sandbox host runs commands WITHOUT isolation; install the Debian package 'bubblewrap' to jail them`,
    );
    return host;
  }
}

/** The host refused to start because the jail does not work here. */
class JailUnavailable extends Error {}

async function launch(
  options: SandboxHostOptions & { root: string; token: string },
  isolation: "bwrap" | "none",
  removeRoot: boolean,
): Promise<StartedSandboxHost> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [HOST_BUNDLE], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...options.env,
      SANDBOX_TOKEN: options.token,
      HOST: "127.0.0.1",
      PORT: String(port),
      SANDBOX_ROOT: options.root,
      SANDBOX_ISOLATION: isolation,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const said: string[] = [];
  const collect = (chunk: Buffer) => said.push(...chunk.toString("utf8").split("\n"));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  await new Promise<void>((resolve, reject) => {
    const onExit = () => {
      const why = said.find((l) => l.startsWith("sandbox host not started")) ?? said.join(" ");
      const message = why.replace(/^sandbox host not started: /, "").trim();
      reject(
        /no working jail/.test(message)
          ? new JailUnavailable(message.replace(/^no working jail: /, ""))
          : new Error(`the sandbox host did not start: ${message}`),
      );
    };
    child.once("exit", onExit);
    const ready = () => {
      if (!said.some((l) => l.startsWith("sandbox host listening"))) return;
      child.off("exit", onExit);
      resolve();
    };
    child.stdout?.on("data", ready);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    token: options.token,
    root: options.root,
    isolation,
    warnings: said.filter((l) => l.startsWith("WARNING: ")).map((l) => l.slice(9)),
    stop: async () => {
      await stopGroup(child);
      if (removeRoot) rmSync(options.root, { recursive: true, force: true });
    },
  };
}

/** Ends the host's whole process group: SIGTERM, then SIGKILL after 5 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.kill(-pid, "SIGTERM");
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
