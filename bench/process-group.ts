/**
 * CPU time and resident memory of a process group, read from /proc: what the local
 * stack's benches report beside their timings (wrangler dev runs `workerd` in the
 * group of the `wrangler` process that global-setup starts detached).
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;
const PAGE_BYTES = 4096;

/** One process's group id, CPU seconds (user + system) and resident bytes. */
function statOf(pid: string): { pgid: number; cpu: number; rss: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: split after its end.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [utime, stime, rss] = [Number(fields[11]), Number(fields[12]), Number(fields[21])];
    return {
      pgid: Number(fields[2]),
      cpu: (utime + stime) / TICKS_PER_SECOND,
      rss: rss * PAGE_BYTES,
    };
  } catch {
    return null; // gone meanwhile
  }
}

function pids(): string[] {
  return readdirSync("/proc").filter((name) => /^\d+$/.test(name));
}

/**
 * The group of the process whose command line holds every one of `words` (e.g. the
 * `wrangler dev` listening on a port), or null when none does.
 * @example groupOf(["wrangler.js", "--port", "8787"])
 */
export function groupOf(words: string[]): number | null {
  for (const pid of pids()) {
    let cmdline: string[];
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (words.every((w) => cmdline.includes(w) || cmdline.some((arg) => arg.endsWith(w)))) {
      return statOf(pid)?.pgid ?? null;
    }
  }
  return null;
}

/**
 * CPU seconds used so far and bytes resident now, summed over the group's processes.
 * @example usageOf(groupOf(["--port", "8787"])!) // { cpu: 3.1, rss: 412_000_000 }
 */
export function usageOf(pgid: number): { cpu: number; rss: number } {
  let cpu = 0;
  let rss = 0;
  for (const pid of pids()) {
    const stat = statOf(pid);
    if (stat?.pgid !== pgid) continue;
    cpu += stat.cpu;
    rss += stat.rss;
  }
  return { cpu, rss };
}

/** The resident bytes of the group's largest process (workerd, for a wrangler dev group). */
export function largestRssOf(pgid: number): number {
  let max = 0;
  for (const pid of pids()) {
    const stat = statOf(pid);
    if (stat?.pgid === pgid) max = Math.max(max, stat.rss);
  }
  return max;
}

/**
 * CPU seconds used so far by each of the group's processes, keyed `name pid` (wrangler
 * dev runs two workerd: its proxy in front, and the one that runs the Worker).
 * @example cpuByProcess(pgid) // { "workerd 412": 3.2, "workerd 398": 1.1, … }
 */
export function cpuByProcess(pgid: number): Record<string, number> {
  const cpu: Record<string, number> = {};
  for (const pid of pids()) {
    const stat = statOf(pid);
    if (stat?.pgid !== pgid) continue;
    let name = "?";
    try {
      name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
      continue; // gone meanwhile
    }
    cpu[`${name} ${pid}`] = stat.cpu;
  }
  return cpu;
}
