/**
 * A Vitest reporter that names a test file that stops making progress, and ends the run
 * when one is stuck, rather than letting CI wait out its whole budget in silence.
 *
 * Per-test and per-hook timeouts cannot catch a file stuck where no timer runs: while it
 * is imported, in a worker blocked in a system call, or in a pool that lost its worker.
 * Every file in the suite takes under 90 s alone, so a file still running after
 * `WARN_MS` is named with its current test; after `STALL_MS`, the reporter prints the
 * processes under Vitest (state and kernel wait channel) and exits 1 (decision 256).
 */
import type { Reporter, TestCase, TestModule } from "vitest/node";
import { processTable } from "./process-table.ts";

// The reporter's own test sets TOOLWIRE_STALL_MS to see a stall in seconds.
const STALL_MS = Number(process.env.TOOLWIRE_STALL_MS) || 7 * 60_000;
const WARN_MS = Math.min(3 * 60_000, STALL_MS / 2);
const CHECK_MS = Math.min(15_000, STALL_MS / 4);

interface Running {
  readonly module: TestModule;
  readonly since: number;
  /** Its tests started and not ended (several when they run concurrently). */
  readonly tests: Set<string>;
  warned: boolean;
}

export default class StalledFileReporter implements Reporter {
  readonly #running = new Map<string, Running>();
  #timer: ReturnType<typeof setInterval> | undefined;

  onTestRunStart(): void {
    this.#timer = setInterval(() => this.#check(), CHECK_MS);
    this.#timer.unref();
  }

  onTestModuleQueued(module: TestModule): void {
    this.#running.set(key(module), { module, since: Date.now(), tests: new Set(), warned: false });
  }

  onTestCaseReady(test: TestCase): void {
    this.#running.get(key(test.module))?.tests.add(test.fullName);
  }

  onTestCaseResult(test: TestCase): void {
    this.#running.get(key(test.module))?.tests.delete(test.fullName);
  }

  onTestModuleEnd(module: TestModule): void {
    this.#running.delete(key(module));
  }

  onTestRunEnd(): void {
    clearInterval(this.#timer);
    this.#running.clear();
  }

  #check(): void {
    const now = Date.now();
    for (const running of this.#running.values()) {
      const seconds = Math.round((now - running.since) / 1000);
      if (now - running.since >= STALL_MS) {
        console.error(`\n[stalled] ${describe(running)} made no end after ${seconds} s`);
        console.error(`[stalled] processes under Vitest (pid ${process.pid}):\n${processTree()}`);
        console.error(
          "[stalled] ending the run with exit 1 (test/support/stalled-file-reporter.ts)",
        );
        process.exit(1);
      }
      if (now - running.since >= WARN_MS && !running.warned) {
        running.warned = true;
        console.error(`[slow] ${describe(running)} still running after ${seconds} s`);
      }
    }
  }
}

function key(module: TestModule): string {
  return `${module.project.name}:${module.moduleId}`;
}

function describe(running: Running): string {
  const [test] = running.tests;
  const where = test ? `at "${test}"` : "(no test reported yet)";
  return `${running.module.project.name || "(root)"} ${running.module.relativeModuleId} ${where}`;
}

/** Every process below this one: pid, parent, state, what it waits on, age, command. */
function processTree(): string {
  const rows = processTable();
  if (typeof rows === "string") return `  ${rows}`;
  const below = new Set([String(process.pid)]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (below.has(row.ppid) && !below.has(row.pid)) {
        below.add(row.pid);
        grew = true;
      }
    }
  }
  return rows
    .filter((row) => below.has(row.pid))
    .map((row) => `  ${row.line}`)
    .join("\n");
}
