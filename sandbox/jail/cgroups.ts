/**
 * A cgroup per command, for the limits that hold for all of a command's processes
 * together: `pids` (the only process limit that holds for a command running as root
 * outside its user namespace, since the kernel exempts root from RLIMIT_NPROC;
 * decision 081) and `memory` (RLIMIT_AS caps each process alone; decision 161). The
 * host creates one directory per exec under a parent it may write and writes the
 * limit; the jail's first process moves itself in before it starts anything, so
 * nothing the command forks escapes. cgroup v1 (one hierarchy per controller) or a v2
 * directory whose `cgroup.subtree_control` enables the controller.
 */
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

/** The controllers a command is limited by. */
type Controller = "pids" | "memory";

/** What one controller's cgroup writes and reads, in cgroup v1 and v2. */
interface ControllerFiles {
  /** The limit the host writes. */
  limit: string;
  /** Written beside the limit when the kernel has it (no swap past a memory cap). */
  alsoLimit?: [file: string, value: (limit: number) => string];
  /** Where the kernel counts the times it enforced the limit, and how to read it. */
  counter: [file: string, count: RegExp];
}

const CONTROLLERS: Record<Controller, { v1: ControllerFiles; v2: ControllerFiles }> = {
  pids: {
    v1: { limit: "pids.max", counter: ["pids.events", /max (\d+)/] },
    v2: { limit: "pids.max", counter: ["pids.events", /max (\d+)/] },
  },
  memory: {
    v1: {
      limit: "memory.limit_in_bytes",
      alsoLimit: ["memory.memsw.limit_in_bytes", String],
      counter: ["memory.oom_control", /^oom_kill (\d+)/m],
    },
    v2: {
      limit: "memory.max",
      alsoLimit: ["memory.swap.max", () => "0"],
      counter: ["memory.events", /^oom_kill (\d+)/m],
    },
  },
};

/** A writable hierarchy of one controller, under which each command's cgroup is created. */
export class Cgroups {
  /** The directory under which each command's cgroup is created. */
  readonly parent: string;
  readonly controller: Controller;
  readonly #v2: boolean;
  #next = 0;

  private constructor(parent: string, controller: Controller, v2: boolean) {
    this.parent = parent;
    this.controller = controller;
    this.#v2 = v2;
  }

  get #files(): ControllerFiles {
    return CONTROLLERS[this.controller][this.#v2 ? "v2" : "v1"];
  }

  /**
   * A writable hierarchy of `controller`, or null. Under the host's own cgroup when it
   * can be written (the command's limit then nests inside the host's), else at the
   * root. Leftovers of hosts that are gone are removed first.
   * @example const pids = Cgroups.find("pids"); // null on a machine without one
   */
  static find(controller: Controller): Cgroups | null {
    for (const [candidate, v2] of parentCandidates(controller)) {
      removeStale(candidate);
      const parent = path.join(
        candidate,
        `toolwire-${process.pid}-${randomBytes(4).toString("hex")}`,
      );
      try {
        mkdirSync(parent, { recursive: true });
        if (!existsSync(path.join(parent, CONTROLLERS[controller][v2 ? "v2" : "v1"].limit))) {
          rmdirSync(parent);
          continue;
        }
        if (v2) writeFileSync(path.join(parent, "cgroup.subtree_control"), `+${controller}`);
        return new Cgroups(parent, controller, v2);
      } catch {
        try {
          rmdirSync(parent);
        } catch {}
      }
    }
    return null;
  }

  /** Creates the cgroup of one command, limited to `limit` (processes, or bytes of memory). */
  create(limit: number): Cgroup {
    const dir = this.#limited(`exec-${++this.#next}`, limit);
    return new Cgroup(dir, this.#files.counter);
  }

  /**
   * A parent of its own under this one whose limit bounds everything created in it
   * together (a sandbox's commands; the controllers are hierarchical).
   */
  child(name: string, limit: number): Cgroups {
    const child = new Cgroups(this.#limited(name, limit), this.controller, this.#v2);
    if (this.#v2) {
      writeFileSync(path.join(child.parent, "cgroup.subtree_control"), `+${this.controller}`);
    }
    return child;
  }

  /** Removes the parent (at host shutdown, once every command's cgroup is gone). */
  dispose(): void {
    try {
      rmdirSync(this.parent);
    } catch {}
  }

  #limited(name: string, limit: number): string {
    const dir = path.join(this.parent, name);
    mkdirSync(dir);
    const files = this.#files;
    writeFileSync(path.join(dir, files.limit), String(limit));
    if (files.alsoLimit) {
      try {
        writeFileSync(path.join(dir, files.alsoLimit[0]), files.alsoLimit[1](limit));
      } catch {}
    }
    return dir;
  }
}

/** One command's cgroup. */
export class Cgroup {
  readonly dir: string;
  readonly #counter: [file: string, count: RegExp];

  constructor(dir: string, counter: [file: string, count: RegExp]) {
    this.dir = dir;
    this.#counter = counter;
  }

  /** Where a process writes its pid to join. */
  get procsFile(): string {
    return path.join(this.dir, "cgroup.procs");
  }

  /**
   * How many times the kernel enforced the limit: forks refused (pids), processes of
   * the group killed for memory (memory).
   */
  enforced(): number {
    try {
      const text = readFileSync(path.join(this.dir, this.#counter[0]), "utf8");
      return Number(this.#counter[1].exec(text)?.[1] ?? 0);
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
      if ((err as NodeJS.ErrnoException).code === "EBUSY" && attempts > 1) {
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

/** Where a hierarchy of `controller` may be made: [directory, is cgroup v2]. */
function parentCandidates(controller: Controller): [string, boolean][] {
  const out: [string, boolean][] = [];
  let cgroups = "";
  try {
    cgroups = readFileSync("/proc/self/cgroup", "utf8");
  } catch {}
  const root = path.join("/sys/fs/cgroup", controller);
  const v1 = new RegExp(`^\\d+:(?:[^:]*,)?${controller}(?:,[^:]*)?:(.*)$`, "m").exec(cgroups)?.[1];
  if (v1 !== undefined && v1 !== "/") out.push([path.join(root, v1), false]);
  out.push([root, false]);
  const v2 = /^0::(.*)$/m.exec(cgroups)?.[1];
  if (v2 !== undefined) {
    const dir = path.join("/sys/fs/cgroup", v2);
    try {
      const control = readFileSync(path.join(dir, "cgroup.subtree_control"), "utf8");
      if (control.split(/\s+/).includes(controller)) out.push([dir, true]);
    } catch {}
  }
  return out;
}
