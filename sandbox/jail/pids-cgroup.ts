import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

/**
 * A pids cgroup per command: the only process limit that holds for a command running
 * as root outside its user namespace (the kernel exempts root from RLIMIT_NPROC). The
 * host creates one directory per exec under a parent it may write, sets `pids.max`,
 * and the jail's first process moves itself in before it starts anything, so nothing
 * the command forks escapes the count (decision 081).
 */
export class PidsCgroups {
  /** The directory under which each command's cgroup is created. */
  readonly parent: string;
  #next = 0;

  private constructor(parent: string) {
    this.parent = parent;
  }

  /**
   * A writable pids hierarchy: cgroup v1's `pids` controller, or a cgroup v2 directory
   * whose `cgroup.subtree_control` enables `pids`; null when neither is available.
   * @example const cgroups = PidsCgroups.find(); // null on a machine without one
   */
  static find(): PidsCgroups | null {
    for (const candidate of parentCandidates()) {
      removeStale(candidate);
      const parent = path.join(
        candidate,
        `toolwire-${process.pid}-${randomBytes(4).toString("hex")}`,
      );
      try {
        mkdirSync(parent, { recursive: true });
        if (!existsSync(path.join(parent, "pids.max"))) {
          rmdirSync(parent);
          continue;
        }
        return new PidsCgroups(parent);
      } catch {}
    }
    return null;
  }

  /**
   * Creates the cgroup of one command with room for `maxProcesses`, and returns the
   * path of its `cgroup.procs` (where the jail writes its own pid).
   */
  create(maxProcesses: number): PidsCgroup {
    const dir = path.join(this.parent, `exec-${++this.#next}`);
    mkdirSync(dir);
    writeFileSync(path.join(dir, "pids.max"), String(maxProcesses));
    return new PidsCgroup(dir);
  }

  /**
   * A parent of its own under this one whose `pids.max` bounds everything created in it
   * together (a sandbox's commands; the v1 and v2 pids controllers are hierarchical).
   */
  child(name: string, maxProcesses: number): PidsCgroups {
    const dir = path.join(this.parent, name);
    mkdirSync(dir);
    writeFileSync(path.join(dir, "pids.max"), String(maxProcesses));
    return new PidsCgroups(dir);
  }

  /** Removes the parent (at host shutdown, once every command's cgroup is gone). */
  dispose(): void {
    try {
      rmdirSync(this.parent);
    } catch {}
  }
}

/** One command's pids cgroup. */
export class PidsCgroup {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Where a process writes its pid to join. */
  get procsFile(): string {
    return path.join(this.dir, "cgroup.procs");
  }

  /** How many times a fork was refused because the group was full. */
  refusedForks(): number {
    try {
      const events = readFileSync(path.join(this.dir, "pids.events"), "utf8");
      return Number(/max (\d+)/.exec(events)?.[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /**
   * Removes the cgroup once it is empty. Members killed a moment ago may still be
   * exiting (EBUSY), so it tries again a few times, 100 ms apart.
   */
  remove(attempts = 20): void {
    try {
      rmdirSync(this.dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EBUSY" && attempts > 1) {
        setTimeout(() => this.remove(attempts - 1), 100).unref();
      }
    }
  }
}

/** Removes the (empty) cgroups left by hosts that are gone (`toolwire-<pid>-…`, pid dead). */
function removeStale(hierarchy: string): void {
  let names: string[];
  try {
    names = readdirSync(hierarchy);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^toolwire-(\d+)-/.exec(name)?.[1];
    if (pid === undefined || existsSync(`/proc/${pid}`)) continue;
    const dir = path.join(hierarchy, name);
    try {
      for (const child of readdirSync(dir, { withFileTypes: true })) {
        if (child.isDirectory()) rmdirSync(path.join(dir, child.name));
      }
      rmdirSync(dir);
    } catch {}
  }
}

function parentCandidates(): string[] {
  const out = ["/sys/fs/cgroup/pids"];
  try {
    const own = /^0::(.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))?.[1];
    if (own !== undefined) {
      const dir = path.join("/sys/fs/cgroup", own);
      const control = readFileSync(path.join(dir, "cgroup.subtree_control"), "utf8");
      if (control.split(" ").includes("pids")) out.push(dir);
    }
  } catch {}
  return out;
}
