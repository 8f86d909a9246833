/**
 * Every process on the machine as `ps -e` lists it, for the reports of a run that hangs
 * (scripts/test.ts, stalled-file-reporter.ts): what each process waits on in the kernel
 * is what tells a stuck run apart from a slow one.
 */
import { execFileSync } from "node:child_process";

/** One process: its ids, and its line as printed (`pid ppid stat wchan etimes args`, cut to 300 characters). */
export interface ProcessRow {
  pid: string;
  ppid: string;
  pgid: string;
  line: string;
}

/**
 * The rows, or why `ps` could not give them.
 * @example const rows = processTable(); if (typeof rows === "string") console.log(rows);
 */
export function processTable(): ProcessRow[] | string {
  let table: string;
  try {
    table = execFileSync("ps", ["-e", "-o", "pgid=,pid=,ppid=,stat=,wchan:24=,etimes=,args="], {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    return `(ps failed: ${String(error)})`;
  }
  return table
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [pgid = "", pid = "", ppid = ""] = line.trim().split(/\s+/);
      // The group id leads only so that it is read; the line shown starts at the pid.
      const shown = line.trim().slice(pgid.length).trim();
      return { pid, ppid, pgid, line: shown.slice(0, 300) };
    });
}
