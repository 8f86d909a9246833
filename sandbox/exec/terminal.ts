/**
 * A command under a pseudo-terminal (decision 180, "a terminal is stdio"): the host opens
 * the terminal with node-pty and starts the jailed command on its other end. What the
 * terminal prints goes, byte for byte, into the output pipe the copier thread reads (as a
 * pipe command's output does), and into a headless xterm that says what the screen is.
 */
import { closeSync, write } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import type pty from "@lydell/node-pty";
import xterm from "@xterm/headless";
import type { TerminalPaint, TerminalScreen, TerminalSize } from "../../src/protocol/index.ts";
import type { JailedCommand } from "../jail/jail.ts";
import { paintScreen } from "./screen-paint.ts";
import { EndMarkScanner, newEndMark } from "./terminal-end-mark.ts";

/** `TERM` of a tty call: xterm's own, which every full-screen program knows. */
const TERMINAL_TYPE = "xterm-256color";

/**
 * The signals a terminal sends its foreground process group (Ctrl-C, Ctrl-\, Ctrl-Z). The
 * terminal's shell and the jail's own processes (the outer bubblewrap) are in that group
 * too: they ignore them, and the command gets them back at their default
 * (`env --default-signal`), so Ctrl-C ends the command, not the jail, and bash reports 130
 * as it does in a terminal.
 */
const TERMINAL_SIGNALS = "INT,QUIT,TSTP";

/**
 * The shell the terminal starts, outside the jail, given the end mark (terminal-end-mark.ts)
 * and the jail's command line. It ignores the terminal's signals (the command resets
 * them) and runs the jail. Once the jail has exited, it prints the mark after everything
 * the command printed and waits, holding the terminal open, until the host has read the
 * mark and sends SIGUSR1 (or a minute has passed); then it exits with the jail's status.
 *
 * Why: when the last holder of a terminal closes it, the host's read stops short
 * (libuv takes the hangup after a short read for the end), and node-pty drops what is
 * unread 200 ms after its child exits. Had the jail been the terminal's last holder and
 * child, a host slow to read (loaded, or pausing the terminal for a copier behind) lost
 * the end of the command's output.
 */
const TERMINAL_SHELL = [
  'trap "" INT QUIT TSTP',
  "mark=$1",
  "shift",
  '"$@"',
  "status=$?",
  "trap 'kill $! 2>/dev/null; exit $status' USR1",
  "printf '%s' \"$mark\"",
  "tries=0",
  'while [ "$tries" -lt 60 ]; do sleep 1 & wait $!; tries=$((tries + 1)); done',
  'exit "$status"',
].join("\n");

/** Processes of the terminal's own above the jail (its shell), for input-wait.ts to skip. */
export const TERMINAL_OWN_PROCESSES = 1;

/** Output queued for the pipe past which the terminal is paused (the copier is far behind). */
const QUEUE_HIGH_BYTES = 8 * 1024 * 1024;

/**
 * node-pty, loaded at the first terminal rather than with the host. It is a native module:
 * the deployment bundle leaves it out (it cannot be inlined), and a host that was installed
 * without it (an optional dependency) still runs every pipe call, and answers a tty call
 * with this error instead of failing to start.
 */
function loadPty(): typeof pty {
  try {
    return createRequire(import.meta.url)("@lydell/node-pty") as typeof pty;
  } catch {
    throw new Error(
      "this sandbox host cannot open terminals: its optional dependency @lydell/node-pty is not installed",
    );
  }
}

/** The command line run in the jail for `command` on a terminal. */
export function terminalArgv(command: string): [string, ...string[]] {
  return ["/usr/bin/env", `--default-signal=${TERMINAL_SIGNALS}`, "/bin/bash", "-c", command];
}

interface TerminalEnd {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One terminal and the command on it.
 * @example const t = TerminalProcess.spawn(jailed, cwd, { cols: 120, rows: 40 }, pipe.writeFd, onEnd);
 */
export class TerminalProcess {
  readonly pid: number;
  readonly #pty: pty.IPty;
  readonly #screen: xterm.Terminal;
  readonly #outputFd: number;
  /** A write into the output pipe is under way. */
  #writing = false;
  /** Output read from the terminal, not yet in the pipe. */
  readonly #queue: Buffer[] = [];
  #queued = 0;
  /** Bytes given to the emulator so far, in the order the pipe gets them. */
  #fed = 0;
  #exit: TerminalEnd | null = null;
  #outputClosed = false;
  readonly #onEnd: (end: TerminalEnd) => void;
  #inputOpen = true;
  /** Finds the end mark the terminal's shell prints after the jail has exited. */
  readonly #endMark: EndMarkScanner;

  private constructor(
    jailed: JailedCommand,
    cwd: string,
    size: TerminalSize,
    outputFd: number,
    onEnd: (end: TerminalEnd) => void,
  ) {
    this.#outputFd = outputFd;
    this.#onEnd = onEnd;
    this.#screen = new xterm.Terminal({
      cols: size.cols,
      rows: size.rows,
      scrollback: 0,
      allowProposedApi: true,
    });
    const mark = newEndMark();
    this.#endMark = new EndMarkScanner(mark);
    this.#pty = loadPty().spawn(
      "/bin/sh",
      ["-c", TERMINAL_SHELL, "sh", mark.toString("latin1"), jailed.file, ...jailed.args],
      {
        name: TERMINAL_TYPE,
        cols: size.cols,
        rows: size.rows,
        cwd,
        env: { ...jailed.env, TERM: TERMINAL_TYPE },
        encoding: null,
      } as pty.IPtyForkOptions,
    );
    this.pid = this.#pty.pid;
    this.#pty.onData((data) => this.#copy(data as unknown as Buffer));
    this.#pty.onExit(({ exitCode, signal }) => {
      const name = signal
        ? (Object.keys(constants.signals) as NodeJS.Signals[]).find(
            (s) => constants.signals[s] === signal,
          )
        : undefined;
      this.#exit = { exitCode: name ? null : exitCode, signal: name ?? null };
      this.#inputOpen = false;
      this.#closeOutput();
    });
  }

  /**
   * Starts `jailed` on a new terminal of `size`; its output goes to `outputFd` (which the
   * terminal closes after the last byte), and `onEnd` is called once the command has
   * exited and every byte it printed is in the pipe.
   */
  static spawn(
    jailed: JailedCommand,
    cwd: string,
    size: TerminalSize,
    outputFd: number,
    onEnd: (end: TerminalEnd) => void,
  ): TerminalProcess {
    return new TerminalProcess(jailed, cwd, size, outputFd, onEnd);
  }

  /**
   * The output into the pipe, in order, one write at a time. The terminal is read on
   * while a write is under way, what the pipe has not taken yet waiting here, so a command
   * printing fast is not held at each write; past `QUEUE_HIGH_BYTES` queued (a copier far
   * behind) the terminal is paused, and the command waits (`TERMINAL_SHELL` keeps the
   * terminal open until everything is read).
   */
  #copy(chunk: Buffer): void {
    if (this.#outputClosed) return;
    const { output: data, ended } = this.#endMark.push(chunk);
    if (ended && this.#inputOpen) {
      // The command is gone and all it printed is read: the shell may exit now.
      this.#inputOpen = false;
      this.#signalShell("SIGUSR1");
    }
    if (data.length === 0) return;
    this.#screen.write(data);
    this.#fed += data.length;
    this.#queue.push(data);
    this.#queued += data.length;
    if (this.#queued > QUEUE_HIGH_BYTES) this.#pty.pause();
    if (!this.#writing) this.#drain();
  }

  #drain(): void {
    const data = this.#queue.shift();
    if (!data) {
      this.#writing = false;
      this.#closeOutput();
      return;
    }
    this.#writing = true;
    const next = (offset: number) => {
      write(this.#outputFd, data, offset, data.length - offset, null, (err, written) => {
        if (!err && offset + written < data.length) return next(offset + written);
        this.#queued -= data.length;
        if (this.#queued <= QUEUE_HIGH_BYTES) this.#pty.resume();
        this.#drain();
      });
    };
    next(0);
  }

  #closeOutput(): void {
    if (this.#writing || this.#outputClosed || !this.#exit) return;
    this.#outputClosed = true;
    closeSync(this.#outputFd);
    this.#onEnd(this.#exit);
  }

  /** True until the command exits or its input is closed. */
  get inputOpen(): boolean {
    return this.#inputOpen;
  }

  /** Types `data` into the terminal (its bytes, as a keyboard sends them). */
  write(data: string): void {
    if (this.#inputOpen) this.#pty.write(data);
  }

  /** The end of input: the terminal's EOF character (Ctrl-D) at the start of a line. */
  endInput(): void {
    this.write("\u0004");
  }

  resize(size: TerminalSize): void {
    if (this.#exit) return;
    this.#pty.resize(size.cols, size.rows);
    this.#screen.resize(size.cols, size.rows);
  }

  /** The screen as the emulator has it once every byte so far is parsed. */
  screen(): Promise<TerminalScreen> {
    return new Promise((resolve) => {
      this.#screen.write("", () => resolve(this.#snapshot()));
    });
  }

  /**
   * The bytes that draw the screen again, and how many output bytes it shows: a late
   * viewer writes them, then the output from that byte on (decision 191).
   */
  paint(): Promise<TerminalPaint> {
    const atByte = this.#fed;
    return new Promise((resolve) => {
      this.#screen.write("", () =>
        resolve({
          cols: this.#screen.cols,
          rows: this.#screen.rows,
          data: paintScreen(this.#screen),
          atByte,
        }),
      );
    });
  }

  #snapshot(): TerminalScreen {
    const buffer = this.#screen.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < this.#screen.rows; row++) {
      lines.push(buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? "");
    }
    return {
      cols: this.#screen.cols,
      rows: this.#screen.rows,
      lines,
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      alternate: buffer.type === "alternate",
    };
  }

  #signalShell(signal: NodeJS.Signals): void {
    try {
      process.kill(this.pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
    }
  }

  /** Frees the emulator once the exec is over. */
  dispose(): void {
    this.#screen.dispose();
  }
}
