import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { findExecutable } from "../jail/find-executable.ts";
import { insideSystemPaths, type Jail } from "../jail/jail.ts";
import { RecordSplitter, type SplitRecord } from "./record-splitter.ts";

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
  /** The signal that ended rg when the consumer did not stop it (its memory ran out). */
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** How ripgrep's stdout is cut into records, each read to at most `maxBytes`. */
interface RipgrepRecords {
  /** The byte that ends a record: `\n` for lines, 0 for `--null` listings. */
  separator: number;
  maxBytes: number;
  /** Gets each record; false kills ripgrep at once. */
  onRecord(record: SplitRecord): boolean;
}

/**
 * Runs ripgrep in the jail (the workspace read-only) and hands its stdout, record by
 * record, to `records.onRecord`; when that returns false the process is killed at once
 * (the upstream search stops at the probe item). Each record is held to `maxBytes`
 * (decision 244), so no output of ripgrep's can grow the host's memory.
 * @example await runRipgrep(jail, rg, ["--files", "--null"], ws.root, { separator: 0, maxBytes: 8192, onRecord: (r) => { paths.push(r.head.toString()); return true; } });
 */
export function runRipgrep(
  jail: Jail,
  rgPath: string,
  args: string[],
  cwd: string,
  records: RipgrepRecords,
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
    let failure: Error | null = null;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    const split = new RecordSplitter(records.separator, records.maxBytes, records.onRecord);
    const stop = () => {
      child.stdout.destroy();
      child.kill("SIGKILL");
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (split.stopped) return;
      try {
        if (!split.push(chunk)) stop();
      } catch (err) {
        failure = err as Error;
        stop();
      }
    });
    child.stdout.on("end", () => {
      try {
        split.end();
      } catch (err) {
        failure = err as Error;
      }
    });
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      if (failure) return reject(failure);
      const stopped = split.stopped;
      resolve({ stopped, exitCode, signal: stopped ? null : signal, stderr: stderr.trim() });
    });
  });
}
