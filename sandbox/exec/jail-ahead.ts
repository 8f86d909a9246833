/**
 * A created sandbox's jail, started before its first command arrives (decision 276).
 *
 * Starting a jail (the cgroup join, `prlimit`, `nsenter`, bubblewrap's namespaces and
 * mounts, then bash) is most of a short command's time on the host. A sandbox's first
 * command almost always follows its create within a second, so the host starts that
 * jail when it creates the sandbox, with the sandbox's own limits, cgroups, network
 * namespace and workspace, exactly as it would for a command. Inside, a small bash
 * script waits on its stdin for the command. The first pipe exec takes the jail and
 * writes its folder, command and variables; the script then becomes `bash -c command`
 * with exactly those variables, as a command started the usual way would be.
 *
 * One jail, once: the sandbox's first exec takes it or ends it (one on a terminal or
 * with stdin starts the usual way; one that arrives while the jail is being spawned
 * waits for the spawn, a few milliseconds, and takes it). A jail not taken within
 * `SANDBOX_JAIL_AHEAD_MS` (default 10 s) is killed, so a sandbox left idle holds no
 * process. Nothing has run in it before the command that takes it.
 */
import { closeSync, writeSync } from "node:fs";
import type { Jail, JailedCommand } from "../jail/jail.ts";
import { type NamedPipe, openNamedPipe } from "./output-pipe.ts";
import { type ProcessExit, type Spawner, sharedSpawner } from "./spawner.ts";

/**
 * How long a jail started ahead waits for its sandbox's first command before it is
 * killed, unless `SANDBOX_JAIL_AHEAD_MS` says otherwise (0: none is started).
 */
export const DEFAULT_AHEAD_MS = 10_000;

/**
 * Longest spec (folder, command and variables) a jail started ahead is given. bash reads
 * a pipe a byte at a time, so a long command starts sooner the usual way.
 */
export const AHEAD_SPEC_MAX_BYTES = 8 * 1024;

/**
 * Jails started ahead and not yet taken or ended, at most, on this host: a burst of
 * creates does not compete with a bubblewrap start for each of them, and what waits is
 * bounded.
 */
const MAX_HELD = 2;
let held = 0;

/**
 * The waiting script: reads the folder, the command and the variables (each ended by a
 * NUL) from stdin, lets go of stdin, and becomes `bash -c command` with exactly those
 * variables. 125: the host closed stdin without a command (it ended the jail).
 */
const WAITER = `IFS= read -r -d '' dir && IFS= read -r -d '' command || exit 125
vars=()
while IFS= read -r -d '' entry; do vars+=("$entry"); done
exec </dev/null
cd -- "$dir" || exit 126
exec /usr/bin/env -i -- "\${vars[@]}" /bin/bash -c "$command"`;

/** A jail started ahead, taken by its sandbox's first command. */
export interface TakenJail {
  /** Its plan, for its cgroups (released when the command ends). */
  jailed: JailedCommand;
  /** The outer process (bubblewrap), as a spawned command's. */
  pid: number;
  exited: Promise<ProcessExit>;
  /** The read end of its output pipe (stdout and stderr). */
  outputFd: number;
  /** The read end of bubblewrap's status pipe. */
  statusFd: number;
}

/** What a command needs to be handed to a jail started ahead. */
export interface AheadCommand {
  /** The folder as the command sees it (`jail.pathInside`). */
  cwd: string;
  command: string;
  /** Its complete environment (`jail.commandEnv`). */
  env: Record<string, string>;
}

type State =
  | { kind: "none" }
  | { kind: "starting"; settled: Promise<void> }
  | { kind: "waiting"; waiting: WaitingJail }
  | { kind: "gone" };

interface WaitingJail {
  jailed: JailedCommand;
  pid: number;
  exited: Promise<ProcessExit>;
  ended: boolean;
  spec: NamedPipe;
  output: NamedPipe;
  status: NamedPipe;
  timer: NodeJS.Timeout;
}

/**
 * One sandbox's jail started ahead: `start` at its create, `take` at its first pipe exec,
 * `end` when it is closed.
 * @example const ahead = new JailAhead(jail, root); ahead.start(); const taken = ahead.take(cmd);
 */
export class JailAhead {
  readonly #jail: Jail;
  readonly #root: string;
  #state: State = { kind: "none" };

  /** `root`: the workspace's host path (where the jail starts before the command's `cd`). */
  constructor(jail: Jail, root: string) {
    this.#jail = jail;
    this.#root = root;
  }

  /** True until the first exec (or `end`): a jail is still to be started, being started, or waits. */
  get pending(): boolean {
    return this.#state.kind !== "gone";
  }

  /**
   * Settles once a jail being started has been spawned (or failed to be): an exec that
   * awaits it first takes the jail, whose start is well under way, instead of starting
   * one of its own beside it. At once when none is being started.
   */
  async started(): Promise<void> {
    if (this.#state.kind === "starting") await this.#state.settled;
  }

  /** True while a jail waits for the first command. */
  get waiting(): boolean {
    return this.#state.kind === "waiting" && !this.#state.waiting.ended;
  }

  /**
   * Starts the jail, to wait `lifetimeMs`, unless it cannot help: a lifetime of 0, no
   * bubblewrap, no spawner, or `MAX_HELD` already held on this host. Never
   * throws: the first command then starts the usual way.
   */
  start(lifetimeMs = DEFAULT_AHEAD_MS, spawner: Spawner | null = sharedSpawner()): void {
    if (this.#state.kind !== "none") return;
    this.#state = { kind: "gone" };
    if (lifetimeMs <= 0 || this.#jail.isolation !== "bwrap" || !spawner) return;
    if (held >= MAX_HELD) return;
    const pipes: NamedPipe[] = [];
    let jailed: JailedCommand;
    try {
      for (let i = 0; i < 3; i++) pipes.push(openNamedPipe());
      jailed = this.#jail.wrap({
        argv: ["/bin/bash", "-c", WAITER],
        cwd: this.#root,
        writable: true,
      });
    } catch {
      for (const pipe of pipes) closePipe(pipe);
      return;
    }
    const [spec, output, status] = pipes as [NamedPipe, NamedPipe, NamedPipe];
    if (!jailed.statusFd) {
      jailed.release();
      for (const pipe of pipes) closePipe(pipe);
      return;
    }
    let settle = () => {};
    this.#state = {
      kind: "starting",
      settled: new Promise((resolve) => {
        settle = resolve;
      }),
    };
    held++;
    void spawner
      .spawn({
        file: jailed.file,
        args: jailed.args,
        env: jailed.env,
        cwd: this.#root,
        open: [
          [0, spec.path, "r"],
          [1, output.path, "w"],
          [3, status.path, "w"],
        ],
        dup: [[2, 1]],
      })
      .then(
        (child) => {
          // The jail holds its ends now; the host keeps only what it reads or writes.
          closeSync(spec.readFd);
          closeSync(output.writeFd);
          closeSync(status.writeFd);
          for (const pipe of pipes) pipe.unlink();
          const waiting: WaitingJail = {
            jailed,
            pid: child.pid,
            exited: child.exited,
            ended: false,
            spec,
            output,
            status,
            timer: setTimeout(() => this.#kill(), lifetimeMs),
          };
          waiting.timer.unref();
          void child.exited.then(() => {
            waiting.ended = true;
            if (this.#state.kind === "waiting" && this.#state.waiting === waiting) this.#kill();
          });
          this.#state = { kind: "waiting", waiting };
        },
        () => {
          held--;
          jailed.release();
          for (const pipe of pipes) closePipe(pipe);
          this.#state = { kind: "gone" };
        },
      )
      .finally(settle);
  }

  /**
   * Hands `command` to the waiting jail and gives it to the caller, or answers null (the
   * command then starts the usual way) and ends the jail: none waits yet, or the command
   * cannot be handed over (too long, or a NUL or a bad variable name in it).
   */
  take(command: AheadCommand): TakenJail | null {
    const state = this.#state;
    const spec = specBytes(command);
    if (state.kind !== "waiting" || state.waiting.ended || spec === null) {
      void this.end();
      return null;
    }
    const waiting = state.waiting;
    this.#state = { kind: "gone" };
    held--;
    clearTimeout(waiting.timer);
    try {
      writeSync(waiting.spec.writeFd, spec);
    } catch {
      // The jail died meanwhile: its exit, soon told, is the command's.
    }
    closeSync(waiting.spec.writeFd);
    return {
      jailed: waiting.jailed,
      pid: waiting.pid,
      exited: waiting.exited,
      outputFd: waiting.output.readFd,
      statusFd: waiting.status.readFd,
    };
  }

  /** Kills a jail not taken and waits until it is gone (its sandbox's mount is then free). */
  async end(): Promise<void> {
    if (this.#state.kind === "none") this.#state = { kind: "gone" };
    if (this.#state.kind === "starting") await this.#state.settled;
    const state = this.#state;
    if (state.kind !== "waiting") return;
    this.#kill();
    await state.waiting.exited;
  }

  /** Kills the waiting jail (not taken) and lets go of all it held. */
  #kill(): void {
    const state = this.#state;
    if (state.kind !== "waiting") return;
    this.#state = { kind: "gone" };
    held--;
    const waiting = state.waiting;
    clearTimeout(waiting.timer);
    closeSync(waiting.spec.writeFd);
    if (!waiting.ended) {
      try {
        process.kill(waiting.pid, "SIGKILL");
      } catch {}
    }
    void waiting.exited.then(() => {
      closeSync(waiting.output.readFd);
      closeSync(waiting.status.readFd);
      waiting.jailed.release();
    });
  }
}

/** Closes and removes a pipe the jail never got. */
function closePipe(pipe: NamedPipe): void {
  closeSync(pipe.readFd);
  closeSync(pipe.writeFd);
  pipe.unlink();
}

/** The spec the waiting script reads, or null when the command cannot be handed over so. */
function specBytes({ cwd, command, env }: AheadCommand): Buffer | null {
  const fields = [cwd, command];
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=")) return null;
    fields.push(`${name}=${value}`);
  }
  if (fields.some((field) => field.includes("\0"))) return null;
  const bytes = Buffer.from(`${fields.join("\0")}\0`);
  return bytes.length > AHEAD_SPEC_MAX_BYTES ? null : bytes;
}
