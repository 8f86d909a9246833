import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A memory cgroup per command, beside its pids cgroup (pids-cgroup.ts): the memory of
 * all the command's processes together is capped, where RLIMIT_AS caps each process
 * alone (decision 161). Past the cap the kernel kills a process of the group (the OOM
 * killer, inside the group only) and counts it; the exec then reports "out of memory".
 * cgroup v1 (`memory.limit_in_bytes`, `memory.oom_control`) or a v2 directory whose
 * `cgroup.subtree_control` enables `memory` (`memory.max`, `memory.events`).
 */
export class MemoryCgroups {
  readonly parent: string;
  readonly #v2: boolean;
  #next = 0;

  private constructor(parent: string, v2: boolean) {
    this.parent = parent;
    this.#v2 = v2;
  }

  /**
   * A writable memory hierarchy, or null. Under the host's own memory cgroup when it can
   * be written (the command's cap then nests inside the host's), else at the root.
   * @example const memory = MemoryCgroups.find(); // null without a memory controller
   */
  static find(): MemoryCgroups | null {
    for (const [candidate, v2] of parentCandidates()) {
      const parent = path.join(
        candidate,
        `toolwire-${process.pid}-${randomBytes(4).toString("hex")}`,
      );
      try {
        mkdirSync(parent);
        const control = v2 ? "memory.max" : "memory.limit_in_bytes";
        if (!existsSync(path.join(parent, control))) {
          rmdirSync(parent);
          continue;
        }
        if (v2) writeFileSync(path.join(parent, "cgroup.subtree_control"), "+memory");
        return new MemoryCgroups(parent, v2);
      } catch {
        try {
          rmdirSync(parent);
        } catch {}
      }
    }
    return null;
  }

  /** Creates the cgroup of one command, capped at `maxBytes` of memory (no swap past it). */
  create(maxBytes: number): MemoryCgroup {
    const dir = path.join(this.parent, `exec-${++this.#next}`);
    mkdirSync(dir);
    if (this.#v2) {
      writeFileSync(path.join(dir, "memory.max"), String(maxBytes));
      try {
        writeFileSync(path.join(dir, "memory.swap.max"), "0");
      } catch {}
    } else {
      writeFileSync(path.join(dir, "memory.limit_in_bytes"), String(maxBytes));
      try {
        writeFileSync(path.join(dir, "memory.memsw.limit_in_bytes"), String(maxBytes));
      } catch {}
    }
    return new MemoryCgroup(dir, this.#v2);
  }

  /** Removes the parent (at host shutdown, once every command's cgroup is gone). */
  dispose(): void {
    try {
      rmdirSync(this.parent);
    } catch {}
  }
}

/** One command's memory cgroup. */
export class MemoryCgroup {
  readonly dir: string;
  readonly #v2: boolean;

  constructor(dir: string, v2: boolean) {
    this.dir = dir;
    this.#v2 = v2;
  }

  /** Where a process writes its pid to join. */
  get procsFile(): string {
    return path.join(this.dir, "cgroup.procs");
  }

  /** How many of the command's processes the kernel killed for memory. */
  oomKills(): number {
    try {
      const file = this.#v2 ? "memory.events" : "memory.oom_control";
      const text = readFileSync(path.join(this.dir, file), "utf8");
      return Number(/^oom_kill (\d+)/m.exec(text)?.[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /** Removes the cgroup once its members are gone (retrying while they exit). */
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

function parentCandidates(): [string, boolean][] {
  const out: [string, boolean][] = [];
  let cgroups = "";
  try {
    cgroups = readFileSync("/proc/self/cgroup", "utf8");
  } catch {}
  const v1 = /^\d+:memory:(.*)$/m.exec(cgroups)?.[1];
  if (v1 !== undefined) {
    out.push([path.join("/sys/fs/cgroup/memory", v1), false]);
    out.push(["/sys/fs/cgroup/memory", false]);
  }
  const v2 = /^0::(.*)$/m.exec(cgroups)?.[1];
  if (v2 !== undefined) {
    const dir = path.join("/sys/fs/cgroup", v2);
    try {
      const control = readFileSync(path.join(dir, "cgroup.subtree_control"), "utf8");
      if (control.split(/\s+/).includes("memory")) out.push([dir, true]);
    } catch {}
  }
  return out;
}
