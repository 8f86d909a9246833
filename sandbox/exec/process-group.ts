import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { JailedCommand } from "../jail/jail.ts";

type ShellProcess = ChildProcessByStdio<Writable | null, null, null> & {
  readonly stdio: [null, null, null, Readable | Writable | null | undefined];
};

/**
 * Starts a jailed command as the leader of a new process group (detached). stdin is
 * closed, or with `stdin` a pipe the host writes (`child.stdin`); stdout and stderr are
 * `outputFd` (the output pipe); fd 3 carries bubblewrap's status (`--json-status-fd 3`)
 * when it is jailed.
 * @example const child = spawnShell(jail.wrap({ argv: ["/bin/bash", "-c", "seq 3"], cwd: ws.root, writable: true }), ws.root, fd);
 */
export function spawnShell(
  jailed: JailedCommand,
  cwd: string,
  outputFd: number,
  stdin = false,
): ShellProcess {
  return spawn(jailed.file, jailed.args, {
    cwd,
    env: jailed.env,
    detached: true,
    stdio: [stdin ? "pipe" : "ignore", outputFd, outputFd, jailed.statusFd ? "pipe" : "ignore"],
  }) as unknown as ShellProcess;
}

/**
 * Which processes a termination signals. Unjailed, both are the shell (leader of its
 * own group). Jailed, `outer` is the host-side bubblewrap, and `group` is the jail's
 * PID 1, leader of the session the command runs in: SIGTERM goes to that group (the
 * PID 1 ignores it, the command may handle it), SIGKILL to `outer`'s group, whose death
 * kills the jail's PID 1 and with it everything in the PID namespace, `setsid` included.
 */
export interface KillTarget {
  outer: number;
  /** null until the jail has reported its PID 1: then only SIGKILL of `outer` is possible. */
  group: number | null;
}

/** A started termination. */
export interface GroupTermination {
  /**
   * Sends SIGKILL now and drops the pending one. Called once the leader has exited:
   * members that outlived it (SIGTERM ignored, pipes not held) are not waited for.
   */
  killNow(): void;
}

/**
 * SIGTERM to the command's process group now, SIGKILL after `graceMs` (or at
 * `killNow`, whichever comes first).
 * @example const termination = terminateGroup({ outer: child.pid!, group: child.pid! }, 2000);
 */
export function terminateGroup(target: KillTarget, graceMs: number): GroupTermination {
  const kill = () => {
    if (target.group !== null) signalGroup(target.group, "SIGKILL");
    // The outer's whole group: a jail killed while it is still being set up has a child
    // that has not left the group yet and that the outer's death does not reach (it
    // would wait for the dead outer, holding the output pipe, for good).
    signalGroup(target.outer, "SIGKILL");
  };
  if (target.group === null) {
    kill();
    return { killNow: kill };
  }
  signalGroup(target.group, "SIGTERM");
  // Members may ignore SIGTERM, with or without the pipes, and outlive the leader.
  const timer = setTimeout(kill, graceMs);
  timer.unref();
  return {
    killNow() {
      clearTimeout(timer);
      kill();
    },
  };
}

/**
 * Sends `signal` to process group `pid`; a group that is already gone is not an error,
 * nor is a pid of a process never started (-1 would be every process there is, 1 init).
 */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid > 1) signalProcess(-pid, signal);
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}
