/**
 * The real processes tests and benchmarks start: `wrangler dev` (offline, on free
 * loopback ports, in a process group of its own) and any Node child, each with the tail
 * of its output kept for the error that says why it did not come up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const HOST = "127.0.0.1";

/** A free loopback port (closed again, so the child can take it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A child of this Node (`args[0]` a script) in its own process group, its last output kept. */
export interface Started {
  child: ChildProcess;
  /** The last 200 chunks of its stdout and stderr. */
  log: string[];
}

/**
 * Starts `node <args>` (this process's Node, first on PATH) in a process group of its
 * own, so `stopGroup` and SIGKILL reach its children too.
 */
export function startNode(args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const log: string[] = [];
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
  return { child, log };
}

/** Waits until `url` answers 2xx (at most 100 s), or throws with the child's last output. */
export async function waitUntilUp(url: string, { child, log }: Started): Promise<void> {
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not come up:\n${log.join("").slice(-4000)}`);
}

/** SIGTERM to the child's group, SIGKILL after 5 s; resolves once it has exited. */
export function stopGroup(child: ChildProcess): Promise<void> {
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

export interface WranglerDevOptions {
  port: number;
  inspectorPort: number;
  /** Where its Durable Objects' state lives (`--persist-to`). */
  persistTo: string;
  /** `--var NAME:value` each. */
  vars: Record<string, string>;
  /** A wrangler config other than the project's (`-c`). */
  config?: string;
  /** Environment on top of this process's (e.g. the container backend's docker settings). */
  env?: NodeJS.ProcessEnv;
  /** `false`: the config's containers are not built or run (`--enable-containers=false`). */
  enableContainers?: boolean;
}

/** `wrangler dev` offline with `options`; call `waitUntilUp` on its `/healthz`. */
export function startWranglerDev(options: WranglerDevOptions): Started {
  return startNode(
    [
      path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      ...(options.config ? ["-c", options.config] : []),
      ...(options.enableContainers === false ? ["--enable-containers=false"] : []),
      ...["--ip", HOST, "--port", String(options.port)],
      ...["--inspector-port", String(options.inspectorPort)],
      ...["--persist-to", options.persistTo, "--show-interactive-dev-session=false"],
      ...Object.entries(options.vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    ],
    {
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      WRANGLER_SEND_METRICS: "false",
      // wrangler dev's local trace store: a tail event per Worker request and per Durable
      // Object call, each written to SQLite with an fsync on workerd's one thread (decision
      // 278). Production's observability is off the request path; so is this stack's.
      X_LOCAL_OBSERVABILITY: "false",
      ...options.env,
    },
  );
}
