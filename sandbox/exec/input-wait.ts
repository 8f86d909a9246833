/**
 * Whether a command is waiting for input, read from the kernel (/proc), not guessed from
 * its output (decision 190). A process waits for input when it sleeps (state S) in a read
 * of its input (the terminal, or the stdin pipe the host holds the other end of), or in a
 * poll or select while its stdin is that input (readline, vim, a REPL). Under a terminal
 * only the terminal's foreground process group counts: a background job reading it would
 * be stopped, not served.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** System call numbers of read and the poll family, per architecture. */
const SYSCALLS: Record<string, { read: number; poll: number[] }> = {
  x64: { read: 0, poll: [7, 23, 232, 270, 271, 281, 441] },
  arm64: { read: 63, poll: [22, 72, 73, 441] },
};

const syscalls = SYSCALLS[process.arch] ?? SYSCALLS.x64!;

interface ProcessStat {
  pid: number;
  state: string;
  pgrp: number;
  tpgid: number;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function statOf(pid: number): ProcessStat | null {
  const text = readText(`/proc/${pid}/stat`);
  if (text === null) return null;
  // The command name may hold spaces and parentheses: the fields start after its last ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    state: fields[0] ?? "",
    pgrp: Number(fields[2]),
    tpgid: Number(fields[5]),
  };
}

/** `root` and every process below it (through /proc/PID/task/TID/children). */
function descendants(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0 && out.length < 4096) {
    const pid = queue.shift()!;
    out.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      const children = readText(`/proc/${pid}/task/${tid}/children`);
      for (const child of children?.trim().split(/\s+/) ?? []) if (child) queue.push(Number(child));
    }
  }
  return out;
}

function fdTarget(pid: number, fd: number | string): string | null {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return null;
  }
}

/** Which of a process's descriptors count as its input. */
type InputMatch = (target: string) => boolean;

/** True when `pid` sleeps reading input that `isInput` names. */
function readsInput(pid: number, isInput: InputMatch): boolean {
  const call = readText(`/proc/${pid}/syscall`)?.trim().split(" ");
  if (!call || call.length < 2) return false;
  const nr = Number(call[0]);
  if (nr === syscalls.read) {
    const target = fdTarget(pid, Number.parseInt(call[1]!, 16));
    return target !== null && isInput(target);
  }
  if (syscalls.poll.includes(nr)) {
    const stdin = fdTarget(pid, 0);
    return stdin !== null && isInput(stdin);
  }
  return false;
}

/** A terminal's input: the terminal device, by any of the names the jail gives it. */
export function terminalInput(terminal: string): InputMatch {
  return (target) =>
    target === terminal ||
    target.startsWith("/dev/pts/") ||
    target === "/dev/console" ||
    target === "/dev/tty";
}

/**
 * Whether the command below `root` waits for input. With `foregroundOnly` (a terminal),
 * only processes of the terminal's foreground group count, read from `root`'s own stat.
 * `skip` are the jail's own processes (bubblewrap outside and as PID 1), which sleep in a
 * poll over the terminal for their whole life.
 * @example awaitingInput(child.pid, terminalInput("/dev/pts/3"), { foregroundOnly: true, skip: 2 })
 */
export function awaitingInput(
  root: number,
  isInput: InputMatch,
  options: { foregroundOnly: boolean; skip: number },
): boolean {
  const rootStat = statOf(root);
  if (rootStat === null) return false;
  const all = descendants(root).slice(options.skip);
  let waiting = false;
  for (const pid of all) {
    const stat = statOf(pid);
    if (stat === null) continue;
    if (options.foregroundOnly && stat.pgrp !== rootStat.tpgid) continue;
    // A process of the command that runs is busy, whatever another one waits for.
    if (stat.state === "R") return false;
    if (stat.state === "S" && readsInput(pid, isInput)) waiting = true;
  }
  return waiting;
}

/** What `root`'s stdin is (a pipe's or a terminal's name in /proc), to match its readers against. */
export function inputOf(root: number): string | null {
  return fdTarget(root, 0);
}
