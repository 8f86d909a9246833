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
 * prints nothing for `SILENT_MS` is shown with its processes and ended with exit 1.
 * `node scripts/test.ts` (what `npm test` runs after typecheck and lint).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";

const HALVES = [
  { name: "unit", projects: ["node", "workers", "workers-sandbox"] },
  { name: "e2e ", projects: ["containers", "e2e"] },
] as const;

/** Longer than any file takes, and than the stalled-file reporter's 7 minutes. */
const SILENT_MS = 10 * 60_000;

const children = new Set<ChildProcess>();

function endGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {}
}

/** The processes of `child`'s group: pid, state, kernel wait channel, age, command. */
function groupTable(child: ChildProcess): string {
  try {
    const table = execFileSync("ps", ["-e", "-o", "pgid=,pid=,stat=,wchan:24=,etimes=,args="], {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    });
    return table
      .split("\n")
      .filter((line) => line.trim().split(/\s+/)[0] === String(child.pid))
      .map((line) => `  ${line.trim().slice(0, 300)}`)
      .join("\n");
  } catch (error) {
    return `  (ps failed: ${String(error)})`;
  }
}

function run(half: (typeof HALVES)[number]): Promise<number> {
  const args = ["vitest", "run", ...half.projects.flatMap((p) => ["--project", p])];
  const child = spawn("npx", [...args, ...process.argv.slice(2)], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.add(child);
  const say = (line: string) => process.stdout.write(`[${half.name}] ${line}\n`);
  let silence: NodeJS.Timeout | undefined;
  let silent = false;
  const listen = () => {
    clearTimeout(silence);
    silence = setTimeout(() => {
      silent = true;
      say(`printed nothing for ${SILENT_MS / 60_000} minutes; its processes:`);
      say(groupTable(child));
      endGroup(child);
    }, SILENT_MS);
  };
  listen();
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      listen();
      say(line);
    });
  }
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      clearTimeout(silence);
      children.delete(child);
      endGroup(child);
      resolve(silent ? 1 : (code ?? (signal ? 1 : 0)));
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
