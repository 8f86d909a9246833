import path from "node:path";
import { positiveInt } from "./env-number.ts";
import { findRipgrep } from "./files/ripgrep.ts";
import type { Isolation, JailProc } from "./jail/jail.ts";
import {
  type CommandLimits,
  DEFAULT_COMMAND_LIMITS,
  DEFAULT_MAX_SPILL_BYTES,
} from "./jail/limits.ts";
import { type EgressSettings, egressSettingsFromEnv } from "./network/egress-settings.ts";
import { type SandboxesConfig, sandboxesConfigFromEnv } from "./sandboxes/config.ts";

/** Everything the host needs to run, resolved from the environment once at start. */
export interface SandboxConfig {
  /** Bearer token every `/v1` request must carry. */
  token: string;
  host: string;
  port: number;
  /** Workspace root (created if missing). */
  root: string;
  /** Host folder of the spill files, outside the workspace; null: `<root>.spill` beside it (decision 160). */
  spillDir: string | null;
  /** Path of `rg`, or null to use the built-in walker for grep and glob. */
  rgPath: string | null;
  /** How long a finished exec stays reachable. */
  keepFinishedMs: number;
  /** Grace between SIGTERM and SIGKILL when a process group is terminated. */
  killGraceMs: number;
  /** Pacing of each NDJSON stream (the sandbox-side adaptive publisher). */
  minIntervalMs: number;
  targetBytesPerSecond: number;
  /** `bwrap` (the default; the host refuses to start without a working jail) or `none`. */
  isolation: Isolation;
  /** Whether the default workspace's commands share the host's network (off: a loopback of their own); created sandboxes follow their own policy instead. */
  network: boolean;
  /** How created sandboxes reach the network through their egress proxy (decision 181). */
  egress: EgressSettings;
  /** The jail's /proc (`SANDBOX_JAIL_PROC`, jail.ts): `new` unless a container needs `host`. */
  jailProc: JailProc;
  /** What each command may use. */
  limits: CommandLimits;
  /** Output past this many bytes stops the command (its spill file holds everything up to there). */
  maxSpillBytes: number;
  /** Commands running at once in one sandbox's app; past it a new exec waits its turn (decisions 162, 248). */
  maxRunningExecs: number;
  /** Execs waiting their turn past which the Worker refuses new calls with a 429 (decision 248). */
  maxQueuedExecs: number;
  /** Created sandboxes (sandbox/sandboxes/config.ts); unset: their defaults beside `root`. */
  sandboxes?: SandboxesConfig;
  /** Largest file `write` and `edit` write (and `edit` reads), in bytes. */
  maxWriteBytes: number;
}

/** Default of `SANDBOX_MAX_WRITE_BYTES`: 512 KiB, so a whole file's JSON fits the Worker's 1 MiB body (decision 130). */
const DEFAULT_MAX_WRITE_BYTES = 512 * 1024;

/** Defaults: loopback, port 8788, `./workspace`, ripgrep when on PATH. */
export const DEFAULT_SANDBOX_CONFIG = {
  host: "127.0.0.1",
  port: 8788,
  root: "./workspace",
  spillDir: null,
  keepFinishedMs: 10 * 60_000,
  killGraceMs: 2000,
  minIntervalMs: 100,
  targetBytesPerSecond: 102_400,
  isolation: "bwrap" as Isolation,
  network: false,
  egress: { available: false, allowPrivate: false, reservedPorts: [], maxConnections: 64 },
  jailProc: "new" as JailProc,
  limits: DEFAULT_COMMAND_LIMITS,
  maxSpillBytes: DEFAULT_MAX_SPILL_BYTES,
  maxRunningExecs: 32,
  maxQueuedExecs: 256,
  maxWriteBytes: DEFAULT_MAX_WRITE_BYTES,
} as const;

/**
 * Reads `SANDBOX_TOKEN` (required), `HOST`, `PORT`, `SANDBOX_ROOT`, `SANDBOX_SPILL_DIR`, `SANDBOX_SEARCH`
 * (`auto` | `ripgrep` | `walker`), `SANDBOX_ISOLATION` (`bwrap` | `none`),
 * `SANDBOX_NETWORK` (`off` | `on`), `SANDBOX_JAIL_PROC` (`new` | `host` | `auto`) and the limits `SANDBOX_MAX_PROCESSES`,
 * `SANDBOX_MAX_FILE_BYTES`, `SANDBOX_MAX_MEMORY_BYTES`, `SANDBOX_MAX_COMMAND_MEMORY_BYTES`,
 * `SANDBOX_MAX_SPILL_BYTES`, `SANDBOX_MAX_RUNNING_EXECS` (32), `SANDBOX_MAX_QUEUED_EXECS` (256)
 * and `SANDBOX_MAX_WRITE_BYTES`; the egress settings (network/egress-settings.ts).
 * Throws a clear error on bad values.
 * @example const config = configFromEnv(process.env);
 */
export function configFromEnv(env: Record<string, string | undefined>): SandboxConfig {
  const token = env.SANDBOX_TOKEN ?? "";
  if (token.length < 16) {
    throw new Error(
      "SANDBOX_TOKEN must be set to a secret of at least 16 characters (npm start generates one into .dev.vars)",
    );
  }
  const port = Number(env.PORT ?? DEFAULT_SANDBOX_CONFIG.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer from 0 to 65535, got '${env.PORT}'`);
  }
  const root = path.resolve(env.SANDBOX_ROOT ?? DEFAULT_SANDBOX_CONFIG.root);
  const limits = {
    maxProcesses: positiveInt(env, "SANDBOX_MAX_PROCESSES", DEFAULT_COMMAND_LIMITS.maxProcesses),
    maxFileBytes: positiveInt(env, "SANDBOX_MAX_FILE_BYTES", DEFAULT_COMMAND_LIMITS.maxFileBytes),
    maxMemoryBytes: positiveInt(
      env,
      "SANDBOX_MAX_MEMORY_BYTES",
      DEFAULT_COMMAND_LIMITS.maxMemoryBytes,
    ),
    maxCommandMemoryBytes: positiveInt(
      env,
      "SANDBOX_MAX_COMMAND_MEMORY_BYTES",
      DEFAULT_COMMAND_LIMITS.maxCommandMemoryBytes,
    ),
  };
  return {
    ...DEFAULT_SANDBOX_CONFIG,
    token,
    host: env.HOST ?? DEFAULT_SANDBOX_CONFIG.host,
    port,
    root,
    spillDir: env.SANDBOX_SPILL_DIR ? path.resolve(env.SANDBOX_SPILL_DIR) : null,
    rgPath: searchEngine(env.SANDBOX_SEARCH, env.PATH),
    isolation: choice(env, "SANDBOX_ISOLATION", ["bwrap", "none"], "bwrap"),
    network: choice(env, "SANDBOX_NETWORK", ["off", "on"], "off") === "on",
    egress: egressSettingsFromEnv(
      env,
      port,
      choice(env, "SANDBOX_ISOLATION", ["bwrap", "none"], "bwrap"),
    ),
    jailProc: choice(env, "SANDBOX_JAIL_PROC", ["new", "host", "auto"], "new"),
    limits,
    maxSpillBytes: positiveInt(env, "SANDBOX_MAX_SPILL_BYTES", DEFAULT_MAX_SPILL_BYTES),
    maxRunningExecs: positiveInt(
      env,
      "SANDBOX_MAX_RUNNING_EXECS",
      DEFAULT_SANDBOX_CONFIG.maxRunningExecs,
    ),
    maxQueuedExecs: positiveInt(
      env,
      "SANDBOX_MAX_QUEUED_EXECS",
      DEFAULT_SANDBOX_CONFIG.maxQueuedExecs,
    ),
    maxWriteBytes: positiveInt(env, "SANDBOX_MAX_WRITE_BYTES", DEFAULT_MAX_WRITE_BYTES),
    sandboxes: sandboxesConfigFromEnv(env, root, limits),
  };
}

function choice<T extends string>(
  env: Record<string, string | undefined>,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new Error(`${name} must be ${allowed.join(" or ")}, got '${value}'`);
  }
  return value as T;
}

function searchEngine(choice: string | undefined, pathEnv: string | undefined): string | null {
  if (choice === "walker") return null;
  const rg = findRipgrep(pathEnv);
  if (choice === "ripgrep" && !rg) {
    throw new Error(
      "SANDBOX_SEARCH=ripgrep but no 'rg' was found on PATH; install ripgrep or use 'auto'",
    );
  }
  if (choice !== undefined && choice !== "auto" && choice !== "ripgrep") {
    throw new Error(`SANDBOX_SEARCH must be auto, ripgrep or walker, got '${choice}'`);
  }
  return rg;
}
