import path from "node:path";
import type { SandboxLimits } from "../../src/protocol/index.ts";
import { positiveInt, wholeNumber } from "../env-number.ts";
import { DEFAULT_AHEAD_MS } from "../exec/jail-ahead.ts";
import { DEFAULT_COMMAND_LIMITS } from "../jail/limits.ts";

/** How a sandbox's disk is bounded: its own loop-mounted ext4 image, or a plain directory (no quota). */
export type DiskMode = "loop" | "none";

/** The host's settings for created sandboxes (the `default` workspace is configured as before). */
export interface SandboxesConfig {
  /** Where each sandbox's directory (and disk image) is made; never inside the default workspace. */
  dir: string;
  disk: DiskMode;
  /** Sandboxes this host holds at once; one more is a 429 with Retry-After. */
  maxSandboxes: number;
  /**
   * Disk images (of `limits.diskBytes`) and networks kept made ahead for new sandboxes
   * (`SANDBOX_POOL_SIZE`, decision 225); absent or 0: each create makes its own.
   */
  poolSize?: number;
  /**
   * How long a new sandbox's jail, started for its first command, waits for it
   * (`SANDBOX_JAIL_AHEAD_MS`, decision 276); 0: none is started. Absent: the default.
   */
  jailAheadMs?: number;
  /** Both each sandbox's defaults and the most a create may ask for (it may only lower them). */
  limits: SandboxLimits;
}

const MiB = 1024 * 1024;

/** Defaults (docs/sandboxes.md): 1 GiB disk, 4 execs, 256 processes, 4 GiB per process, 2 GiB of egress, 64 sandboxes. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  diskBytes: 1024 * MiB,
  maxExecs: 4,
  maxProcesses: DEFAULT_COMMAND_LIMITS.maxProcesses,
  maxMemoryBytes: DEFAULT_COMMAND_LIMITS.maxMemoryBytes,
  maxFileBytes: DEFAULT_COMMAND_LIMITS.maxFileBytes,
  egressBytes: 2048 * MiB,
};

/** Sandboxes' parts made ahead by default: about 4 × 7.5 MiB of bridges and 4 sparse images (decision 225). */
export const DEFAULT_POOL_SIZE = 4;

/** The smallest disk a sandbox may have: ext4 needs room for its own metadata. */
export const MIN_DISK_BYTES = 8 * MiB;

/**
 * The sandboxes' settings for a host whose default workspace is `root`, from
 * `SANDBOXES_DIR` (default `<root>-sandboxes`), `SANDBOX_DISK` (`loop` | `none`; default
 * `loop` when the host runs as root, which mounting needs), `SANDBOX_MAX_SANDBOXES`,
 * `SANDBOX_DISK_BYTES`, `SANDBOX_MAX_EXECS`, `SANDBOX_EGRESS_BYTES`, `SANDBOX_POOL_SIZE`,
 * `SANDBOX_JAIL_AHEAD_MS`. Processes, memory and file size per sandbox
 * follow the host's command limits.
 * @example const sandboxes = sandboxesConfigFromEnv(process.env, "/srv/workspace", limits);
 */
export function sandboxesConfigFromEnv(
  env: Record<string, string | undefined>,
  root: string,
  commandLimits: Pick<SandboxLimits, "maxProcesses" | "maxMemoryBytes" | "maxFileBytes">,
): SandboxesConfig {
  const disk = env.SANDBOX_DISK || (process.getuid?.() === 0 ? "loop" : "none");
  if (disk !== "loop" && disk !== "none") {
    throw new Error(`SANDBOX_DISK must be loop or none, got '${disk}'`);
  }
  const dir = path.resolve(env.SANDBOXES_DIR || `${root}-sandboxes`);
  if (
    dir === root ||
    dir.startsWith(`${root}${path.sep}`) ||
    root.startsWith(`${dir}${path.sep}`)
  ) {
    throw new Error(
      `SANDBOXES_DIR (${dir}) must lie outside the default workspace (${root}) and not contain it: its commands would see every sandbox`,
    );
  }
  const diskBytes = positiveInt(env, "SANDBOX_DISK_BYTES", DEFAULT_SANDBOX_LIMITS.diskBytes);
  if (diskBytes < MIN_DISK_BYTES) {
    throw new Error(`SANDBOX_DISK_BYTES must be at least ${MIN_DISK_BYTES}, got ${diskBytes}`);
  }
  return {
    dir,
    disk,
    maxSandboxes: positiveInt(env, "SANDBOX_MAX_SANDBOXES", 64),
    poolSize: wholeNumber(env, "SANDBOX_POOL_SIZE", DEFAULT_POOL_SIZE),
    jailAheadMs: wholeNumber(env, "SANDBOX_JAIL_AHEAD_MS", DEFAULT_AHEAD_MS),
    limits: {
      diskBytes,
      maxExecs: positiveInt(env, "SANDBOX_MAX_EXECS", DEFAULT_SANDBOX_LIMITS.maxExecs),
      egressBytes: positiveInt(env, "SANDBOX_EGRESS_BYTES", DEFAULT_SANDBOX_LIMITS.egressBytes),
      ...commandLimits,
    },
  };
}
