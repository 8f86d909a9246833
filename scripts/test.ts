/**
 * Runs every test in two Vitest processes at once: the CPU-bound projects (node,
 * workers, workers-sandbox; files in parallel) and the ones that mostly wait on other
 * processes (containers, e2e; a file at a time, each starting its own stacks). One
 * Vitest runs its sequential projects only after its parallel ones, which left the
 * machine half idle for the e2e half of the run (decision 255). Each line is prefixed
 * with its half; the exit status is the worse of the two. Extra arguments go to both.
 *
 * Each half runs in a process group of its own, ended once the half exits: a test
 * worker that Vitest left behind (decision 256) cannot keep CI waiting. A half that
 * prints nothing for `SILENT_MS`, or that has printed its summary and not exited
 * `EXIT_MS` later, is shown with its processes and threads and ended with exit 1.
 * `node scripts/test.ts` (what `npm test` runs after typecheck and lint).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { stripVTControlCharacters } from "node:util";
import { processTable } from "../test/support/process-table.ts";

const HALVES = [
  { name: "unit", projects: ["node", "workers", "workers-sandbox"] },
  { name: "e2e ", projects: ["containers", "e2e"] },
] as const;

/** Longer than any file takes, and than the stalled-file reporter's 7 minutes. */
const SILENT_MS = 10 * 60_000;
/** Vitest's own close gives up after 10 s (its teardownTimeout). */
const EXIT_MS = 60_000;

const children = new Set<ChildProcess>();

function endGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {}
}

/**
 * The processes of `child`'s group: pid, state, kernel wait channel, age, command, and
 * what each one's threads wait on (a Node that cannot exit waits on a thread).
 */
function groupTable(child: ChildProcess): string {
  const rows = processTable();
  if (typeof rows === "string") return `  ${rows}`;
  return rows
    .filter((row) => row.pgid === String(child.pid))
    .map((row) => `  ${row.line}\n    threads wait in: ${threadWaits(row.pid)}`)
    .join("\n");
}

/** How many of process `pid`'s threads wait on each kernel wait channel. */
function threadWaits(pid: string): string {
  const counts = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const wchan = readFileSync(`/proc/${pid}/task/${tid}/wchan`, "utf8") || "running";
      counts.set(wchan, (counts.get(wchan) ?? 0) + 1);
    }
  } catch {}
  return [...counts].map(([wchan, n]) => `${n} ${wchan}`).join(", ") || "(gone)";
}

function run(half: (typeof HALVES)[number]): Promise<number> {
  const args = ["vitest", "run", ...half.projects.flatMap((p) => ["--project", p])];
  const child = spawn("npx", [...args, ...process.argv.slice(2)], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.add(child);
  const say = (text: string) => {
    for (const line of text.split("\n")) process.stdout.write(`[${half.name}] ${line}\n`);
  };
  let watch: NodeJS.Timeout | undefined;
  let stuck = false;
  let summarized = false;
  const giveUpIn = (ms: number, why: string) => {
    clearTimeout(watch);
    watch = setTimeout(() => {
      stuck = true;
      say(`${why}; its processes:`);
      say(groupTable(child));
      endGroup(child);
    }, ms);
  };
  giveUpIn(SILENT_MS, `printed nothing for ${SILENT_MS / 60_000} minutes`);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      say(line);
      // Vitest's summary ends with its Duration line; the process should exit next.
      if (/^\s*Duration\s/.test(stripVTControlCharacters(line))) summarized = true;
      if (summarized)
        giveUpIn(EXIT_MS, `printed its summary and did not exit in ${EXIT_MS / 1000} s`);
      else giveUpIn(SILENT_MS, `printed nothing for ${SILENT_MS / 60_000} minutes`);
    });
  }
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      clearTimeout(watch);
      children.delete(child);
      endGroup(child);
      resolve(stuck ? 1 : (code ?? (signal ? 1 : 0)));
    });
  });
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of children) endGroup(child);
    process.exit(130);
  });
}

const started = Date.now();
const codes = await Promise.all(HALVES.map(run));
const seconds = ((Date.now() - started) / 1000).toFixed(0);
console.log(
  `tests: ${HALVES.map((h, i) => `${h.name.trim()} exit ${codes[i]}`).join(", ")} (${seconds} s)`,
);
process.exit(Math.max(...codes));
