import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";

/**
 * Absolute path of `rg` on PATH, or null.
 * @example findRipgrep() // "/usr/bin/rg"
 */
export function findRipgrep(pathEnv = process.env.PATH ?? ""): string | null {
  for (const dir of pathEnv.split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, "rg");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/** Outcome of one ripgrep run: `stderr` holds its complaint when it exited with 2. */
export interface RipgrepRun {
  /** True when the consumer stopped early (rg was killed, not failed). */
  stopped: boolean;
  exitCode: number | null;
  stderr: string;
}

/**
 * Runs ripgrep and hands each stdout line to `onLine`; when `onLine` returns false the
 * process is killed at once (the upstream search stops at the probe item).
 * @example await runRipgrep(rg, ["--files"], ws.root, (line) => { paths.push(line); return true; });
 */
export function runRipgrep(
  rgPath: string,
  args: string[],
  cwd: string,
  onLine: (line: string) => boolean,
): Promise<RipgrepRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
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
