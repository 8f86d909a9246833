/**
 * A command's output pipe: its stdout and stderr are the write end (one pipe, so both
 * interleave in true order), and the copier thread reads the other (decisions 086, 087).
 *
 * Node has no pipe(2) for a child, and a `stdio: "pipe"` is a socket pair (a command
 * could not reopen `/dev/stdout`). So the pipe is a FIFO made in a directory only this
 * host can open (mode 0700, under the host's own temporary directory, which no jail
 * mounts), opened and unlinked before the command starts.
 *
 * Making a FIFO takes a `mkfifo` process, and a synchronous spawn from the host's large
 * Node blocked its event loop some 18 ms per command. So FIFOs are made ahead, `BATCH`
 * at a time whenever fewer than `LOW` are ready, by the spawner (spawner.ts) or one
 * `mkfifo` started asynchronously; a command that finds none ready makes its own as
 * before.
 */
import { execFile, spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { findExecutable } from "../jail/find-executable.ts";
import { sharedSpawner } from "./spawner.ts";

/** The ends of one output pipe, all held by the host until it hands them over. */
export interface OutputPipe {
  /** Given to the command as stdout and stderr. */
  writeFd: number;
  /** The read end (blocking): where the copier thread waits for output. */
  readFd: number;
}

let pipeDirectory: string | null = null;
let pipeCount = 0;
const mkfifo = findExecutable("mkfifo");

/** Where the FIFOs are made: private to this host, removed when it exits. */
function directory(): string {
  if (pipeDirectory) return pipeDirectory;
  const made = mkdtempSync(path.join(tmpdir(), "toolwire-pipes-"));
  pipeDirectory = made;
  process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  return made;
}

/** FIFOs made ahead, not yet opened. */
const ready: string[] = [];
let making = false;
const BATCH = 16;
const LOW = 8;

/**
 * Starts making `BATCH` FIFOs at once, unless enough are ready or some are being made:
 * by the spawner where there is one (no process at all, decision 259), else by one
 * `mkfifo`.
 */
export function prepareOutputPipes(): void {
  if (!mkfifo || making || ready.length >= LOW) return;
  making = true;
  const fifos = Array.from({ length: BATCH }, () => path.join(directory(), String(++pipeCount)));
  const made = (err: unknown) => {
    making = false;
    // On a failure the next command makes its own, and says why if it fails too.
    if (!err) ready.push(...fifos);
    else for (const fifo of fifos) rmSync(fifo, { force: true });
  };
  const spawner = sharedSpawner();
  if (spawner) spawner.makeFifos(fifos).then(() => made(null), made);
  else execFile(mkfifo, ["-m", "600", ...fifos], made);
}

/**
 * An output pipe whose FIFO still has its name, for a child the host does not start
 * itself (spawner.ts), which opens it by `path`; `unlink` once it has.
 */
export interface NamedPipe extends OutputPipe {
  path: string;
  unlink(): void;
}

/** A new output pipe. Throws when `mkfifo` (coreutils) is missing or fails. */
export function openOutputPipe(): OutputPipe {
  const { readFd, writeFd, unlink } = openNamedPipe();
  unlink();
  return { readFd, writeFd };
}

/** A new output pipe, its FIFO still named. Throws as `openOutputPipe` does. */
export function openNamedPipe(): NamedPipe {
  if (!mkfifo) throw new Error("'mkfifo' (coreutils) is needed on PATH");
  let fifo = ready.shift();
  if (fifo === undefined) {
    fifo = path.join(directory(), String(++pipeCount));
    const made = spawnSync(mkfifo, ["-m", "600", fifo], { stdio: "ignore" });
    if (made.status !== 0) throw new Error(`mkfifo failed (${made.error?.message ?? made.status})`);
  }
  prepareOutputPipes();
  const named = fifo;
  const unlink = () => rmSync(named, { force: true });
  try {
    // A FIFO opened for reading waits for a writer and the other way round; the
    // read-write descriptor is both, so none of the opens below waits.
    const both = openSync(fifo, constants.O_RDWR);
    try {
      const readFd = openSync(fifo, constants.O_RDONLY);
      const writeFd = openSync(fifo, constants.O_WRONLY);
      return { readFd, writeFd, path: fifo, unlink };
    } finally {
      closeSync(both);
    }
  } catch (err) {
    unlink();
    throw err;
  }
}
