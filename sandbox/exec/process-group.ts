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

/** A started termination of one process group. */
export interface GroupTermination {
  /**
   * Sends SIGKILL to the group now and drops the pending one. Called once the leader
   * has exited: members that outlived it (SIGTERM ignored, pipes not held) are not
   * waited for, and nothing would be left to fire the delayed SIGKILL after the exec ends.
   */
  killNow(): void;
}

/**
 * Signals the whole process group led by `pid`: SIGTERM now, SIGKILL after `graceMs`
 * (or at `killNow`, whichever comes first).
 * @example const termination = terminateGroup(child.pid!, 2000);
 */
export function terminateGroup(pid: number, graceMs: number): GroupTermination {
  signalGroup(pid, "SIGTERM");
  // Members may ignore SIGTERM, with or without the pipes, and outlive the leader.
  const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
  timer.unref();
  return {
    killNow() {
      clearTimeout(timer);
      signalGroup(pid, "SIGKILL");
    },
  };
}

/** Sends `signal` to process group `pid`; a group that is already gone is not an error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}
