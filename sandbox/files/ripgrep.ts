import { type ChildProcessByStdio, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { findExecutable } from "../jail/find-executable.ts";
import { insideSystemPaths, type Jail } from "../jail/jail.ts";

/**
 * Absolute path of `rg` on PATH, or null.
 * @example findRipgrep() // "/usr/bin/rg"
 */
export function findRipgrep(pathEnv = process.env.PATH ?? ""): string | null {
  return findExecutable("rg", pathEnv);
}

/** Outcome of one ripgrep run: `stderr` holds its complaint when it exited with 2. */
export interface RipgrepRun {
  /** True when the consumer stopped early (rg was killed, not failed). */
  stopped: boolean;
  exitCode: number | null;
  stderr: string;
}

/**
 * Runs ripgrep in the jail (the workspace read-only) and hands each stdout line to
 * `onLine`; when `onLine` returns false the process is killed at once (the upstream
 * search stops at the probe item).
 * @example await runRipgrep(jail, rg, ["--files"], ws.root, (line) => { paths.push(line); return true; });
 */
export function runRipgrep(
  jail: Jail,
  rgPath: string,
  args: string[],
  cwd: string,
  onLine: (line: string) => boolean,
): Promise<RipgrepRun> {
  const jailed = jail.wrap({
    argv: [rgPath, ...args],
    cwd,
    writable: false,
    readOnly: insideSystemPaths(rgPath) ? [] : [rgPath],
  });
  return new Promise((resolve, reject) => {
    const child = spawn(jailed.file, jailed.args, {
      cwd,
      env: jailed.env,
      stdio: ["ignore", "pipe", "pipe", jailed.statusFd ? "pipe" : "ignore"],
    }) as ChildProcessByStdio<null, Readable, Readable>;
    let stderr = "";
    let stopped = false;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => {
      if (stopped) return;
      if (!onLine(line)) {
        stopped = true;
        lines.close();
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", (exitCode) => resolve({ stopped, exitCode, stderr: stderr.trim() }));
  });
}
