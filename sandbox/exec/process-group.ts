import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";

export type ShellProcess = ChildProcessByStdio<null, Readable, Readable>;

export interface SpawnShellOptions {
  command: string;
  cwd: string;
  /** The complete environment (nothing is inherited from the host). */
  env: Record<string, string>;
}

/**
 * Runs `command` under `/bin/sh -c` as the leader of a new process group (detached),
 * so that everything it starts can be terminated together. stdin is closed.
 * @example const child = spawnShell({ command: "seq 3", cwd: ws.root, env: {} });
 */
export function spawnShell(opts: SpawnShellOptions): ShellProcess {
  return spawn("/bin/sh", ["-c", opts.command], {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * Signals the whole process group led by `pid`: SIGTERM now, SIGKILL after `graceMs`.
 * Returns a function that cancels the pending SIGKILL (call it once the pipes closed).
 * @example const cancel = terminateGroup(child.pid!, 2000);
 */
export function terminateGroup(pid: number, graceMs: number): () => void {
  signalGroup(pid, "SIGTERM");
  // Children may ignore SIGTERM or outlive the leader and hold the pipes open.
  const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
  timer.unref();
  return () => clearTimeout(timer);
}

/** Sends `signal` to process group `pid`; a group that is already gone is not an error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}
