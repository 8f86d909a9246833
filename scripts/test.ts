/**
 * Runs every test in two Vitest processes at once: the CPU-bound projects (node,
 * workers, workers-sandbox; files in parallel) and the ones that mostly wait on other
 * processes (containers, e2e; a file at a time, each starting its own stacks). One
 * Vitest runs its sequential projects only after its parallel ones, which left the
 * machine half idle for the e2e half of the run (decision 255). Each line is prefixed
 * with its half; the exit status is the worse of the two. Extra arguments go to both.
 * `node scripts/test.ts` (what `npm test` runs after typecheck and lint).
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const HALVES = [
  { name: "unit", projects: ["node", "workers", "workers-sandbox"] },
  { name: "e2e ", projects: ["containers", "e2e"] },
] as const;

function run(half: (typeof HALVES)[number]): Promise<number> {
  const args = ["vitest", "run", ...half.projects.flatMap((p) => ["--project", p])];
  const child = spawn("npx", [...args, ...process.argv.slice(2)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      process.stdout.write(`[${half.name}] ${line}\n`);
    });
  }
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const started = Date.now();
const codes = await Promise.all(HALVES.map(run));
const seconds = ((Date.now() - started) / 1000).toFixed(0);
console.log(
  `tests: ${HALVES.map((h, i) => `${h.name.trim()} exit ${codes[i]}`).join(", ")} (${seconds} s)`,
);
process.exit(Math.max(...codes));
