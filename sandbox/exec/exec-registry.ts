import { EXEC_ID_PATTERN } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import { ExecRun, type ExecRunOptions } from "./exec-run.ts";

/**
 * Every exec this host knows, by id. A finished exec stays reachable for `keepMs`
 * (default 10 minutes) so a caller that lost its stream can still read the result.
 */
export class ExecRegistry {
  readonly #runs = new Map<string, ExecRun>();
  readonly #keepMs: number;

  /** @example const registry = new ExecRegistry(10 * 60_000); */
  constructor(keepMs: number) {
    this.#keepMs = keepMs;
  }

  /** The run named `execId`, if it is running or finished less than `keepMs` ago. */
  get(execId: string): ExecRun | undefined {
    return this.#runs.get(execId);
  }

  /** How many of its runs have not exited yet. */
  runningCount(): number {
    let n = 0;
    for (const run of this.#runs.values()) if (!run.exit) n++;
    return n;
  }

  /**
   * Creates and registers a run, not started yet (it may wait its turn, exec-gate.ts):
   * reattach, input and kill find it at once. The caller checked that the id is free.
   */
  register(options: ExecRunOptions): ExecRun {
    const run = new ExecRun(options);
    this.#runs.set(run.execId, run);
    const unsubscribe = run.subscribe(() => {
      if (!run.exit) return;
      unsubscribe();
      const timer = setTimeout(() => {
        if (this.#runs.get(run.execId) === run) this.#runs.delete(run.execId);
      }, this.#keepMs);
      timer.unref();
    });
    return run;
  }

  /** Drops a run that was refused before it started (a full line, exec-gate.ts). */
  forget(execId: string): void {
    this.#runs.delete(execId);
  }

  /**
   * Kills every running exec (host shutdown) and resolves once all have exited, or
   * after `waitMs` (the SIGKILL grace plus a margin) if some never do.
   */
  killAll(waitMs: number): Promise<void> {
    const running = [...this.#runs.values()].filter((run) => !run.exit);
    const exited = running.map(
      (run) =>
        new Promise<void>((resolve) => {
          const unsubscribe = run.subscribe(() => {
            if (!run.exit) return;
            unsubscribe();
            resolve();
          });
          run.kill();
        }),
    );
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      void Promise.all(exited).then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** The exec named `execId`, or a 404 that says why it may be gone. */
export function findRun(registry: ExecRegistry, execId: string): ExecRun {
  const run = EXEC_ID_PATTERN.test(execId) ? registry.get(execId) : undefined;
  if (!run) {
    throw new SandboxError(
      "not_found",
      `no exec '${execId}' on this sandbox (never started, or finished more than 10 minutes ago)`,
    );
  }
  return run;
}
