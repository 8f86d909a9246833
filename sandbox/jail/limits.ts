import { readFileSync } from "node:fs";

/**
 * What one command may use. Every exec gets these (the host's configuration); the
 * jail enforces them: processes through a pids cgroup, file size and memory through
 * rlimits set before the jail starts (inherited by everything in it).
 */
export interface CommandLimits {
  /** Processes and threads the command may have at once, its shell included. */
  maxProcesses: number;
  /** Largest file the command may write (RLIMIT_FSIZE); a write past it fails with EFBIG. */
  maxFileBytes: number;
  /** Address space of each process (RLIMIT_AS); an allocation past it fails. */
  maxMemoryBytes: number;
  /**
   * Memory of all the command's processes together (a memory cgroup, cgroups.ts);
   * past it the kernel kills one of them and the exec fails "out of memory".
   */
  maxCommandMemoryBytes: number;
}

const GiB = 1024 * 1024 * 1024;

/**
 * Defaults (README, "Sandbox limits"; docs/sandbox-security.md): 256 processes, 1 GiB per
 * file, 4 GiB of address space per process, 4 GiB of memory for the whole command.
 */
export const DEFAULT_COMMAND_LIMITS: CommandLimits = {
  maxProcesses: 256,
  maxFileBytes: GiB,
  maxMemoryBytes: 4 * GiB,
  maxCommandMemoryBytes: 4 * GiB,
};

/** Default cap of the spill file: 1 GiB. Output past it stops the command. */
export const DEFAULT_MAX_SPILL_BYTES = GiB;

/**
 * "1 GiB", "512 MiB", "4096 bytes": how a limit reads in an error message.
 * @example formatBytes(1024 ** 3) // "1 GiB"
 */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ["GiB", GiB],
    ["MiB", 1024 * 1024],
    ["KiB", 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} bytes`;
}

/**
 * The host process's own limit named `name` in /proc/self/limits ("Max file size"),
 * soft or hard; Infinity when unlimited or unknown. What the host starts outside the
 * jail (the output copier) runs under the soft one.
 */
export function hostLimit(name: string, which: "soft" | "hard"): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith(name));
    const value = line?.slice(name.length).trim().split(/\s+/)[which === "soft" ? 0 : 1];
    return value === undefined || value === "unlimited" ? Number.POSITIVE_INFINITY : Number(value);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
