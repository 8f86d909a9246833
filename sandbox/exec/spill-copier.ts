/**
 * The copier between a command and its spill file: the command's stdout and stderr are
 * the write end of one pipe (so both interleave in true order), and a `cat` outside the
 * jail copies the pipe into the spill file in 128 KiB writes, exactly as the issue's
 * baseline `cmd | cat > file` does. Many commands write 4 KiB at a time, which a pipe
 * takes cheaply and ext4 does not (decision 086).
 *
 * Node has no pipe(2) for two children, so the pipe is a FIFO made in a directory only
 * this host can open (mode 0700, under the host's own temporary directory, which no jail
 * mounts), opened both ways and unlinked before the command starts.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { findExecutable } from "../jail/find-executable.ts";

/** The ends of a command's output pipe, both held by the host until it hands them over. */
export interface OutputPipe {
  /** Given to the command as stdout and stderr. */
  writeFd: number;
  /** Given to the copier as stdin. */
  readFd: number;
}

/** A running copier: `cat`, reading the pipe until every writer is gone. */
export interface SpillCopier {
  /** Resolves with how `cat` ended; its exit means the file holds everything written. */
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops copying now (the spill cap): writers then get EPIPE, nothing more reaches the disk. */
  stop(): void;
}

let pipeDirectory: string | null = null;
let pipeCount = 0;
const tools: { mkfifo: string; cat: string } | null = (() => {
  const mkfifo = findExecutable("mkfifo");
  const cat = findExecutable("cat");
  return mkfifo && cat ? { mkfifo, cat } : null;
})();

/** Where the FIFOs are made: private to this host, removed when it exits. */
function directory(): string {
  if (pipeDirectory) return pipeDirectory;
  pipeDirectory = mkdtempSync(path.join(tmpdir(), "toolwire-pipes-"));
  const made = pipeDirectory;
  process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  return made;
}

/**
 * A new pipe, as two descriptors of the host, both blocking (`cat` and the command get
 * them as they are). Throws when `mkfifo` or `cat` is missing (coreutils).
 */
export function openOutputPipe(): OutputPipe {
  if (!tools) throw new Error("'mkfifo' and 'cat' (coreutils) are needed on PATH");
  const fifo = path.join(directory(), String(++pipeCount));
  const made = spawnSync(tools.mkfifo, ["-m", "600", fifo], { stdio: "ignore" });
  if (made.status !== 0) throw new Error(`mkfifo failed (${made.error?.message ?? made.status})`);
  try {
    // A FIFO opened for reading waits for a writer and the other way round; the
    // read-write descriptor is both, so neither open below waits.
    const both = openSync(fifo, constants.O_RDWR);
    try {
      const readFd = openSync(fifo, constants.O_RDONLY);
      const writeFd = openSync(fifo, constants.O_WRONLY);
      return { readFd, writeFd };
    } finally {
      closeSync(both);
    }
  } finally {
    unlinkSync(fifo);
  }
}

/**
 * Starts `cat` from `pipe.readFd` into `spillFd` and closes the host's copy of the read
 * end. The copier is in the host's process group, not the command's: a termination of
 * the command leaves it running, so it copies what is still in the pipe, then ends.
 */
export function startCopier(pipe: OutputPipe, spillFd: number): SpillCopier {
  if (!tools) throw new Error("'cat' (coreutils) is needed on PATH");
  let child: ChildProcess;
  try {
    child = spawn(tools.cat, [], { stdio: [pipe.readFd, spillFd, "ignore"], env: {} });
  } finally {
    closeSync(pipe.readFd);
  }
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("error", () => resolve({ code: null, signal: null }));
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  return {
    done,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
