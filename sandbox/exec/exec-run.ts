import { closeSync } from "node:fs";
import { Socket } from "node:net";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import {
  DEFAULT_OUTPUT_POLICY,
  type OutputPolicy,
  type Truncation,
} from "../../src/core/output/index.ts";
import type {
  ExecLimits,
  ExitUpdate,
  InputState,
  TerminalPaint,
  TerminalSize,
} from "../../src/protocol/index.ts";
import type { Jail, JailedCommand } from "../jail/jail.ts";
import { formatBytes, hostLimit } from "../jail/limits.ts";
import type { SpillFolder } from "../spill-folder.ts";
import { CopierThread, type CopyEnd, type CopyTotals } from "./copier-thread.ts";
import { awaitingInput, inputOf, terminalInput } from "./input-wait.ts";
import type { JailAhead, TakenJail } from "./jail-ahead.ts";
import { type NamedPipe, type OutputPipe, openNamedPipe, openOutputPipe } from "./output-pipe.ts";
import {
  type GroupTermination,
  type KillTarget,
  signalGroup,
  spawnShell,
  terminateGroup,
} from "./process-group.ts";
import type { SourceView, ViewPosition } from "./source-view.ts";
import { type Spawner, type SpawnPlan, sharedSpawner } from "./spawner.ts";
import { SpillFile } from "./spill-file.ts";
import { SpillFollower } from "./spill-follower.ts";
import { TERMINAL_OWN_PROCESSES, TerminalProcess, terminalArgv } from "./terminal.ts";

export interface ExecRunOptions {
  execId: string;
  command: string;
  /** Absolute, already confined to the workspace. */
  cwd: string;
  /** The call's own variables (the jail adds its clean base: PATH, HOME, LANG, TMPDIR). */
  env: Record<string, string>;
  /** The jail every command runs in. */
  jail: Jail;
  timeoutSec?: number;
  /** Seconds without output after which the command is stopped (decision 171). */
  idleTimeoutSec?: number;
  limits?: ExecLimits;
  /** The folder of the spill file (the command's output; removed at the end if it fit the window). */
  spills: SpillFolder;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** Output past this many bytes stops the command; the spill file holds exactly this many. */
  maxSpillBytes: number;
  /** Run under a pseudo-terminal of this size (terminal.ts). */
  tty?: TerminalSize;
  /** Keep stdin open as a pipe that `input` writes (a background call). */
  stdin?: boolean;
  /** Its sandbox's jail started ahead, which a pipe exec takes while it waits (decision 276). */
  ahead?: JailAhead;
}

/** Least time between two tellings of a waiting exec's place, but for its first and "next". */
const QUEUE_NOTICE_MS = 1000;
/**
 * One command and its bounded view. The command's stdout and stderr are one pipe (so
 * both interleave in true order); a copier thread of the host reads it, appends it to the
 * spill file (O_APPEND) and counts its newlines (decisions 086, 087); the host follows
 * the file behind it (spill-follower.ts), reading only what the window can keep into
 * one `SourceView` for the window and the exact totals, and removes the file at the end
 * when the output fit the window (decision 084).
 */
export class ExecRun {
  readonly execId: string;
  readonly #options: ExecRunOptions;
  readonly #policy: OutputPolicy;
  readonly #spill: SpillFile;
  /** The spill file's path as published (the jail's and the file tools' name for it). */
  readonly #spillPath: string;
  /** Reads the spill file behind the command into the view (spill-follower.ts). */
  readonly #follower: SpillFollower;
  /** Set once the output is past the window: the file is kept and its path published. */
  #spillOpened = false;
  #exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  #jailed: JailedCommand | null = null;
  /** Copies the command's pipe into the spill file. */
  #copier: CopierThread | null = null;
  /**
   * What the copier wrote, once it has ended (the file then holds everything the command
   * wrote; its thread may copy for another exec next).
   */
  #finalTotals: CopyTotals | null = null;
  /** The command has exited (or never started). */
  #commandDone = false;
  #target: KillTarget = { outer: -1, group: null };
  /** The command's terminal, for a tty exec. */
  #terminal: TerminalProcess | null = null;
  /** The command's stdin pipe, while it is open (a pipe exec with `stdin`). */
  #stdin: Writable | null = null;
  #exitUpdate: ExitUpdate | null = null;
  #failure: string | null = null;
  #termination: GroupTermination | null = null;
  #timeoutTimer: NodeJS.Timeout | null = null;
  #idleTimer: NodeJS.Timeout | null = null;
  /** Which limit stopped the command, if one did. */
  #stoppedBy: ExitUpdate["stoppedBy"] = undefined;
  readonly #listeners = new Set<() => void>();
  /** Told of each input before it is written (its streams expect the echo). */
  readonly #inputListeners = new Set<() => void>();
  /** Execs before this one in its sandbox's line (exec-gate.ts); null once it runs, or if it never waited. */
  #ahead: number | null = null;
  /** When its place was last told (performance.now()), so a long line is not told each move. */
  #aheadToldAt = 0;
  #started = false;

  constructor(options: ExecRunOptions) {
    this.execId = options.execId;
    this.#options = options;
    this.#policy = { ...DEFAULT_OUTPUT_POLICY, ...definedLimits(options.limits) };
    this.#spill = new SpillFile(options.spills, options.execId);
    this.#spillPath = options.spills.jailPath(options.execId);
    this.#follower = new SpillFollower({
      spill: this.#spill,
      policy: this.#policy,
      totals: () => this.#finalTotals ?? this.#copier?.totals() ?? { bytes: 0, newlines: 0 },
      exited: () => this.#commandDone && this.#finalTotals !== null,
      grew: () => this.#grew(),
      drained: () => this.#finish(),
    });
  }

  /**
   * Spawns the command (`bash -c command`, in the jail) with its output into a pipe, and
   * the copier thread from the pipe into the spill file (copier-thread.ts).
   */
  start(): void {
    if (this.#started || this.#exitUpdate) return;
    this.#started = true;
    if (this.#ahead !== null) {
      this.#ahead = null;
      this.#notify();
    }
    const { jail, command, cwd, env } = this.#options;
    let jailed: JailedCommand;
    let spillFd: number;
    let pipe: OutputPipe | null = null;
    // A pipe exec without stdin is started by the spawner, where there is one (decision 259).
    const spawner =
      this.#options.tty === undefined && this.#options.stdin !== true ? sharedSpawner() : null;
    let named: NamedPipe | null = null;
    let taken: TakenJail | null = null;
    try {
      spillFd = this.#openSpill();
      const ahead = this.#options.ahead?.pending ? this.#options.ahead : null;
      // A terminal or stdin exec: the jail started ahead cannot serve it, nor anything after it.
      if (ahead && !spawner) void ahead.end();
      taken =
        ahead && spawner
          ? ahead.take({ cwd: jail.pathInside(cwd), command, env: jail.commandEnv(env) })
          : null;
      if (taken) {
        // The jail holds the write end: the host never had it.
        pipe = { readFd: taken.outputFd, writeFd: -1 };
        jailed = taken.jailed;
      } else {
        named = spawner ? openNamedPipe() : null;
        pipe = named ?? openOutputPipe();
        const tty = this.#options.tty !== undefined;
        const argv: [string, ...string[]] = tty
          ? terminalArgv(command)
          : ["/bin/bash", "-c", command];
        jailed = jail.wrap({ argv, cwd, env, writable: true, tty });
      }
    } catch (err) {
      this.#failure = `could not start the command: ${(err as Error).message}`;
      if (pipe) for (const fd of [pipe.readFd, pipe.writeFd]) closeSync(fd);
      named?.unlink();
      this.#commandDone = true;
      this.#finalTotals = { bytes: 0, newlines: 0 };
      this.#finish();
      return;
    }
    this.#jailed = jailed;
    this.#copier = CopierThread.acquire();
    this.#copier.run(
      { readFd: pipe.readFd, spillFd, maxBytes: this.#options.maxSpillBytes },
      (end) => {
        this.#finalTotals = end.totals;
        this.#copierEnded(end);
        this.#follower.follow();
      },
    );
    if (this.#options.tty) {
      this.#startTerminal(jailed, this.#options.tty, pipe.writeFd);
      return;
    }
    if (taken) {
      this.#startTaken(taken);
      return;
    }
    if (spawner && named) {
      this.#startSpawned(spawner, jailed, cwd, named);
      return;
    }
    let child: ReturnType<typeof spawnShell>;
    try {
      child = spawnShell(jailed, cwd, pipe.writeFd, this.#options.stdin === true);
    } finally {
      // The command holds its own end now: the pipe ends when its last process is gone.
      closeSync(pipe.writeFd);
    }
    this.#target = { outer: child.pid ?? -1, group: jailed.statusFd ? null : (child.pid ?? null) };
    const status = child.stdio[3];
    if (status && "setEncoding" in status) this.#readJailStatus(status as Readable);
    if (child.stdin) {
      this.#stdin = child.stdin;
      // A command that exits without reading all of its input closes the pipe under a write.
      child.stdin.on("error", () => {
        this.#stdin = null;
      });
    }
    child.on("error", (err) => this.#fail(`could not start the command: ${err.message}`));
    child.on("close", (code, signal) => this.#commandExited({ code, signal }));
    this.#follower.follow();
    this.#startTimers();
  }

  /**
   * A pipe exec started by the spawner (spawner.ts, decision 259): the command opens its
   * output pipe, and bubblewrap's status pipe, by name. The host holds the write ends
   * until the command has its own, so that the copier cannot see the pipe end before the
   * command began. A stop asked for before the pid is known is carried out once it is.
   */
  #startSpawned(spawner: Spawner, jailed: JailedCommand, cwd: string, pipe: NamedPipe): void {
    const held: NamedPipe[] = [pipe];
    const open: SpawnPlan["open"] = [
      [0, "/dev/null", "r"],
      [1, pipe.path, "w"],
    ];
    const gone = (message: string) => {
      this.#fail(`could not start the command: ${message}`);
      this.#exited = { code: null, signal: null };
      this.#commandDone = true;
      this.#follower.follow();
    };
    const handOver = () => {
      for (const p of held) {
        closeSync(p.writeFd);
        p.unlink();
      }
    };
    if (jailed.statusFd) {
      let status: NamedPipe;
      try {
        status = openNamedPipe();
      } catch (err) {
        handOver();
        gone((err as Error).message);
        return;
      }
      held.push(status);
      open.push([3, status.path, "w"]);
      this.#readJailStatus(new Socket({ fd: status.readFd, readable: true, writable: false }));
    }
    spawner
      .spawn({ file: jailed.file, args: jailed.args, env: jailed.env, cwd, open, dup: [[2, 1]] })
      .then(
        (child) => {
          handOver();
          this.#target = { outer: child.pid, group: jailed.statusFd ? null : child.pid };
          if (this.#failure) this.#stopGroup();
          // Its limits count from now: the spawner may have taken a while on a loaded host.
          else this.#startTimers();
          void child.exited.then((exit) => this.#commandExited(exit));
        },
        (err: Error) => {
          handOver();
          gone(err.message);
        },
      );
    this.#follower.follow();
  }

  /** A pipe exec handed to its sandbox's jail started ahead (jail-ahead.ts, decision 276). */
  #startTaken(taken: TakenJail): void {
    this.#target = { outer: taken.pid, group: null };
    this.#readJailStatus(new Socket({ fd: taken.statusFd, readable: true, writable: false }));
    this.#startTimers();
    void taken.exited.then((exit) => this.#commandExited(exit));
    this.#follower.follow();
  }

  /** The command's shell (or outer bubblewrap) has ended, however it was started. */
  #commandExited(exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    this.#exited = exit;
    this.#commandDone = true;
    this.#stdin = null;
    this.#afterCommand();
    this.#follower.follow();
  }

  /**
   * A tty exec: the command on a terminal of its own (terminal.ts), whose output is the
   * copier's input; the terminal closes the pipe's write end after its last byte. Its
   * kill is SIGKILL of the outer bubblewrap (a terminal's child has no status descriptor
   * to name the jail's PID 1); the command's own way to be interrupted is Ctrl-C.
   */
  #startTerminal(jailed: JailedCommand, size: TerminalSize, outputFd: number): void {
    let terminal: TerminalProcess;
    try {
      terminal = TerminalProcess.spawn(jailed, this.#options.cwd, size, outputFd, (end) => {
        this.#exited = { code: end.exitCode, signal: end.signal };
        this.#commandDone = true;
        this.#follower.follow();
      });
    } catch (err) {
      closeSync(outputFd);
      this.#fail(`could not start the command: ${(err as Error).message}`);
      this.#commandDone = true;
      this.#follower.follow();
      return;
    }
    this.#terminal = terminal;
    this.#target = { outer: terminal.pid, group: null };
    this.#follower.follow();
    this.#startTimers();
  }

  #startTimers(): void {
    const timeoutSec = this.#options.timeoutSec;
    if (timeoutSec !== undefined) {
      this.#timeoutTimer = setTimeout(
        () =>
          this.#terminate(
            `timed out after ${timeoutSec} s (timeout); the process group was killed; its output is kept`,
            "timeout",
          ),
        timeoutSec * 1000,
      );
      this.#timeoutTimer.unref();
    }
    if (this.#options.idleTimeoutSec !== undefined) this.#watchIdle(this.#options.idleTimeoutSec);
  }

  /**
   * Stops the command once it has printed nothing for `seconds`: the copier's byte count
   * is sampled a few times a second (a counter read, no syscall), so a command that keeps
   * printing is never stopped, and a silent one is stopped within a sample of the limit.
   */
  #watchIdle(seconds: number): void {
    const limitMs = seconds * 1000;
    const sampleMs = Math.min(250, Math.max(10, limitMs / 4));
    let seen = -1;
    let lastOutputAt = Date.now();
    this.#idleTimer = setInterval(() => {
      const bytes = this.#copier?.totals().bytes ?? 0;
      const now = Date.now();
      if (bytes !== seen) {
        seen = bytes;
        lastOutputAt = now;
        return;
      }
      if (now - lastOutputAt < limitMs) return;
      this.#terminate(
        `timed out after ${seconds} s (idle): no output for that long; the process group was killed; its output is kept`,
        "idleTimeout",
      );
    }, sampleMs);
    this.#idleTimer.unref();
  }

  /** Creates the spill file; its errors name the published path, never the host's. */
  #openSpill(): number {
    try {
      return this.#spill.open();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new Error(`the spill file ${this.#spillPath} could not be created (${code})`);
    }
  }

  /**
   * The command's shell is gone. In the jail everything else of it died with the jail's
   * PID 1, so the pipe is closed: the copier reads it to its end, however long a loaded
   * host takes (a backstop there cut exact output short). Unjailed, what it left in its process group is killed
   * as the jail would, and a process that left the group (`setsid`) gets the grace to
   * let go of the pipe before the copier stops.
   */
  #afterCommand(): void {
    if (this.#jailed?.statusFd || this.#terminal) return;
    if (this.#target.group !== null) signalGroup(this.#target.group, "SIGKILL");
    const copier = this.#copier;
    if (!copier || this.#finalTotals) return;
    const backstop = setTimeout(() => {
      if (!this.#finalTotals) copier.stop();
    }, this.#options.killGraceMs);
    backstop.unref();
  }

  /** True when the command runs under a terminal (its input then goes through the line discipline). */
  get onTerminal(): boolean {
    return this.#terminal !== null;
  }

  /** True when `input` reaches the command: its terminal, or its open stdin pipe. */
  get inputOpen(): boolean {
    if (this.#exitUpdate) return false;
    return this.#terminal ? this.#terminal.inputOpen : this.#stdin !== null;
  }

  /** Sends `data` to the command's terminal or stdin pipe; with `eof`, then ends its input. */
  input(data: string, eof: boolean): void {
    for (const listener of this.#inputListeners) listener();
    if (this.#terminal) {
      if (data !== "") this.#terminal.write(data);
      if (eof) this.#terminal.endInput();
      // A terminal echoes what is typed: look for it at once.
      this.#follower.expectOutput();
      return;
    }
    const stdin = this.#stdin;
    if (!stdin) return;
    if (data !== "") stdin.write(data);
    if (eof) {
      stdin.end();
      this.#stdin = null;
    }
  }

  /** Resizes the command's terminal (SIGWINCH); nothing for a pipe exec. */
  resize(size: TerminalSize): void {
    this.#terminal?.resize(size);
  }

  /** Its terminal's screen as bytes that draw it again; null for a pipe exec or once it ended. */
  async paint(): Promise<TerminalPaint | null> {
    if (!this.#terminal || this.#exitUpdate) return null;
    return this.#terminal.paint();
  }

  /** Bytes the command printed so far. */
  get bytesPrinted(): number {
    return (this.#finalTotals ?? this.#copier?.totals())?.bytes ?? 0;
  }

  /** Where the command's input stands: its screen, and whether it waits for input (input-wait.ts). */
  async inputState(): Promise<InputState> {
    const terminal = this.#terminal;
    const screen = terminal ? await terminal.screen() : undefined;
    const running = this.#exitUpdate === null && !this.#commandDone;
    const jailed = this.#options.jail.isolation === "bwrap";
    let waiting = false;
    if (running && this.#target.outer > 0 && (terminal || this.#stdin)) {
      const input = inputOf(this.#target.outer);
      if (input !== null) {
        waiting = awaitingInput(
          this.#target.outer,
          terminal ? terminalInput(input) : (target) => target === input,
          {
            foregroundOnly: terminal !== null,
            skip: (jailed ? 2 : 0) + (terminal ? TERMINAL_OWN_PROCESSES : 0),
          },
        );
      }
    }
    const state: InputState = {
      tty: terminal !== null,
      awaitingInput: waiting,
      totalBytes: this.bytesPrinted,
      inputOpen: this.inputOpen,
      exited: this.#exitUpdate !== null,
    };
    if (screen) state.screen = screen;
    if (waiting) {
      const prompt = screen ? promptOnScreen(screen) : lastLine(this.#view.text);
      if (prompt !== "") state.prompt = prompt;
    }
    return state;
  }

  /** Terminates the process group (SIGTERM, then SIGKILL after the grace); a waiting exec never runs. */
  kill(): void {
    if (!this.#started) {
      this.#endUnstarted("killed on request while it waited its turn; it never ran");
      return;
    }
    this.#terminate("killed on request; the process group was terminated");
  }

  /**
   * Waits its turn with `ahead` execs before it (exec-gate.ts). Each start moves everyone
   * in line up one, so telling every waiter every move would be O(n²) stream lines (and
   * Durable Object writes) for a line of n: its place is told when it joins, when it is
   * next, and otherwise at most once per `QUEUE_NOTICE_MS`; a line then carries the
   * latest place.
   */
  wait(ahead: number): void {
    if (this.#started || this.#exitUpdate || this.#ahead === ahead) return;
    const joined = this.#ahead === null;
    this.#ahead = ahead;
    const now = performance.now();
    if (!joined && ahead !== 0 && now - this.#aheadToldAt < QUEUE_NOTICE_MS) return;
    this.#aheadToldAt = now;
    this.#notify();
  }

  /** Execs before this one in line; null when it runs, ended or never waited. */
  get queuedAhead(): number | null {
    return this.#ahead;
  }

  /** Ends an exec whose command never started: nothing was spawned, opened or spilled. */
  #endUnstarted(reason: string): void {
    if (this.#exitUpdate) return;
    this.#ahead = null;
    this.#exitUpdate = { kind: "exit", exitCode: null, signal: "SIGTERM", error: reason };
    this.#notify();
    this.#listeners.clear();
  }

  /** Current text of the view. */
  get text(): string {
    return this.#view.text;
  }

  /** Where the current text sits in the stream of everything appended. */
  get viewPosition(): ViewPosition {
    return this.#view.position;
  }

  /** Source-owned totals (exact, everything ever printed) plus the spill path once it is kept. */
  get metadata(): Truncation {
    const truncation = this.#view.truncation();
    return this.#spillOpened ? { ...truncation, spillPath: this.#spillPath } : truncation;
  }

  /** The exit, once the process is gone and its output read to the end. */
  get exit(): ExitUpdate | null {
    return this.#exitUpdate;
  }

  /** Calls `listener` after every change, and once more when the run exits. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` at each input, before it is written; returns the unsubscribe. */
  onInput(listener: () => void): () => void {
    this.#inputListeners.add(listener);
    return () => this.#inputListeners.delete(listener);
  }

  /**
   * The copier ended. At the end of the command's output that is all; at the cap, or at
   * the host's own file size limit (which then is the output's cap), the command is
   * stopped with the cap's error; on a read or write error, nothing more can be kept, so
   * the command is stopped too.
   */
  #copierEnded(end: CopyEnd): void {
    switch (end.reason) {
      case "eof":
      case "stopped": // the backstop after the command's exit (a survivor holding the pipe)
        return;
      case "cap":
        this.#spillCapReached(this.#options.maxSpillBytes);
        return;
      case "file-limit":
        this.#spillCapReached(
          Math.min(this.#options.maxSpillBytes, hostLimit("Max file size", "soft")),
        );
        return;
      case "disk-full":
        this.#diskFull(end.totals);
        return;
      case "error":
        this.#fail(
          `the output could not be copied (${end.message}); the command was stopped; its output up to there is kept`,
        );
    }
  }

  /**
   * The spill's disk is full: what the file holds is all that is kept, and the totals
   * count exactly that. The file is kept (as at the cap), so its bytes stay readable
   * however little fit, and the message says where the output was cut.
   */
  #diskFull(kept: CopyTotals): void {
    this.#spillOpened = true;
    const bytes = kept.bytes.toLocaleString("en-US");
    this.#fail(
      `the disk is full (ENOSPC): the output was cut after ${bytes} bytes, which ${this.#spillPath} holds and the totals count; what the command printed after them is lost; the command was stopped`,
    );
  }

  /** The view grew: past the window, the file is kept and its path published. */
  #grew(): void {
    const seen = this.#follower.bytesSeen;
    if (!this.#spillOpened && (this.#view.truncated || seen > this.#policy.maxBytes)) {
      this.#spillOpened = true;
    }
    this.#notify();
  }

  /** The output reached a cap: the spill keeps exactly the cap, and the command is stopped. */
  #spillCapReached(limit: number): void {
    this.#spillOpened = true;
    // The copier stopped reading at the cap: the command's writes now fail (EPIPE).
    this.#fail(
      `output reached the ${formatBytes(limit)} limit; the command was stopped; everything up to there is in ${this.#spillPath}`,
    );
  }

  #fail(message: string): void {
    if (this.#failure) return;
    this.#failure = message;
    this.#stopGroup();
  }

  #terminate(message: string, stoppedBy?: ExitUpdate["stoppedBy"]): void {
    if (this.#exitUpdate || this.#failure) return;
    this.#failure = message;
    this.#stoppedBy = stoppedBy;
    if (this.#idleTimer) clearInterval(this.#idleTimer);
    this.#stopGroup();
  }

  #stopGroup(): void {
    if (this.#target.outer < 0 || this.#termination) return;
    this.#termination = terminateGroup(this.#target, this.#options.killGraceMs);
  }

  /** bubblewrap's first status object names the jail's PID 1, the group SIGTERM goes to. */
  #readJailStatus(status: Readable): void {
    let text = "";
    status.setEncoding("utf8");
    status.on("data", (piece: string) => {
      if (this.#target.group !== null) return;
      text += piece;
      const pid = /"child-pid":\s*(\d+)/.exec(text)?.[1];
      if (pid !== undefined) this.#target.group = Number(pid);
    });
  }

  /** The command is gone and its output read: settle the file and report the exit. */
  #finish(): void {
    if (this.#exitUpdate) return;
    if (this.#timeoutTimer) clearTimeout(this.#timeoutTimer);
    if (this.#idleTimer) clearInterval(this.#idleTimer);
    this.#follower.stop();
    // A terminated command is over once its shell is gone: whatever is left of the group
    // (SIGTERM ignored, pipes not held, so nothing kept the exec open) is killed now.
    this.#termination?.killNow();
    const oomKills = this.#jailed?.memory?.enforced() ?? 0;
    if (oomKills > 0) {
      const limit = formatBytes(this.#options.jail.limits.maxCommandMemoryBytes);
      this.#failure ??= `out of memory: the command's processes together reached the ${limit} memory limit, and the kernel killed ${oomKills === 1 ? "one of them" : `${oomKills} of them`}; its output up to there is kept`;
    }
    this.#jailed?.release();
    this.#terminal?.dispose();
    const code = this.#exited?.code ?? null;
    const signal = this.#exited?.signal ?? null;
    this.#view.end();
    this.#follower.release();
    // Output that fit but is not plain UTF-8 shows U+FFFD where its bytes were: the spill
    // is kept (and its path published) so the raw bytes stay readable (decision 165).
    if (!this.#spillOpened && this.#view.text.includes("\uFFFD")) this.#spillOpened = true;
    try {
      this.#spill.close(this.#spillOpened);
    } catch (err) {
      this.#failure ??= `spill file could not be closed (${(err as Error).message}); output is incomplete`;
    }
    const update: ExitUpdate = { kind: "exit", exitCode: code };
    if (signal) update.signal = signal;
    // bubblewrap exits with 128 + n when the command died of signal n; on a
    // termination the host caused, that is reported as the signal, as unjailed.
    const jailSignal = this.#termination && code !== null ? signalOf(code) : undefined;
    if (jailSignal) {
      update.exitCode = null;
      update.signal = jailSignal;
    }
    if (this.#failure) update.error = this.#failure;
    if (this.#stoppedBy) update.stoppedBy = this.#stoppedBy;
    this.#exitUpdate = update;
    this.#notify();
    this.#listeners.clear();
  }

  get #view(): SourceView {
    return this.#follower.view;
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** The text before the cursor on its row, or the last row above it that holds any. */
function promptOnScreen(screen: { lines: string[]; cursor: { row: number; col: number } }): string {
  const here = (screen.lines[screen.cursor.row] ?? "").slice(0, screen.cursor.col).trim();
  if (here !== "") return here;
  for (let row = screen.cursor.row - 1; row >= 0; row--) {
    const text = screen.lines[row]?.trim() ?? "";
    if (text !== "") return text;
  }
  return "";
}

/** The last line of `text` that holds anything (a pipe's prompt has no newline yet). */
function lastLine(text: string): string {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line !== "") return line.slice(-200);
  }
  return "";
}

/** The signal a jailed command died of, from bubblewrap's exit code 128 + n. */
function signalOf(code: number): NodeJS.Signals | undefined {
  if (code <= 128) return undefined;
  const n = code - 128;
  return (Object.keys(constants.signals) as NodeJS.Signals[]).find(
    (name) => constants.signals[name] === n,
  );
}

function definedLimits(limits: ExecLimits | undefined): Partial<OutputPolicy> {
  const out: Partial<OutputPolicy> = {};
  if (limits?.retain !== undefined) out.retain = limits.retain;
  if (limits?.maxBytes !== undefined) out.maxBytes = limits.maxBytes;
  if (limits?.maxLines !== undefined) out.maxLines = limits.maxLines;
  return out;
}
