import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import path from "node:path";
import { SPILL_JAIL_PATH } from "../spill-folder.ts";
import { WORKSPACE_PATH } from "../workspace.ts";
import type { Cgroup, Cgroups } from "./cgroups.ts";
import { findExecutable } from "./find-executable.ts";
import { type CommandLimits, hostLimit } from "./limits.ts";

/** How commands are isolated: a bubblewrap jail, or not at all (an explicit operator choice). */
export type Isolation = "bwrap" | "none";

/**
 * The jail's /proc: `new` mounts one of its own PID namespace (`--proc`); `host` binds
 * the host's read-only with the host's own processes hidden, for containers whose
 * runtime masks /proc paths, where the kernel refuses a new proc mount; `auto` tries
 * `new` and falls back to `host` with a warning (decision 144).
 */
export type JailProc = "new" | "host" | "auto";

/** The system the jail shows read-only; nothing else of the host is mounted (no /home, /root, /work, /tmp, /var). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

/** Files under /etc that are hidden (bound to /dev/null): they are readable by their owner, root. */
const MASKED_FILES = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"];

/** PATH inside the jail. */
const JAIL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The user id a jailed command runs as inside its user namespace. Non-zero, so
 * bubblewrap gives it no capabilities (it cannot remount anything); outside the
 * namespace it is the host's own user.
 */
const JAIL_UID = 1000;

/**
 * Processes of the jail itself beyond the command's: bubblewrap outside and bubblewrap
 * as PID 1 inside. The command's `maxProcesses` is added to them in `pids.max`.
 */
const JAIL_OWN_PROCESSES = 2;

interface JailOptions {
  isolation: Isolation;
  /** Network inside the jail: off (`--unshare-net`, a loopback of its own) unless true. */
  network: boolean;
  limits: CommandLimits;
  /** Where each command's pids cgroup is made; null: no process limit is possible. */
  cgroups: Cgroups | null;
  /** Where each command's memory cgroup is made; null or absent: memory is capped per process only. */
  memory?: Cgroups | null;
  /** Host folder shown read-only in every jail at `/toolwire/spill` (spill-folder.ts); null: none. */
  spillFolder?: string | null;
  /** The jail's /proc; default `new`. */
  proc?: JailProc;
  /** A sandbox's own network namespace (decision 180): commands enter it and get its proxy in their environment. */
  namespace?: JailNamespace | null;
  /**
   * False when a jail of this host with the same bubblewrap and a resolved `proc` has
   * already run (a created sandbox's, decision 227): the probe then costs a create a
   * blocking bubblewrap run and proves nothing new. Default true.
   */
  probe?: boolean;
}

/** A network namespace commands run in: the argv prefix that enters it, and the variables it adds. */
export interface JailNamespace {
  enter: string[];
  env: Record<string, string>;
}

/** What to spawn, with its complete environment. */
export interface JailedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** True when fd 3 is bubblewrap's JSON status (the first object names the jail's PID 1 as `child-pid`). */
  statusFd: boolean;
  /** The command's pids cgroup (removed with `release`). */
  cgroup: Cgroup | null;
  /** The command's memory cgroup (removed with `release`): its `enforced()` count says whether memory ran out. */
  memory: Cgroup | null;
  /** Frees what the jail held for the command, once it has exited. */
  release(): void;
}

interface JailRequest {
  argv: [string, ...string[]];
  /** Absolute working directory (inside the workspace). */
  cwd: string;
  /** The command's own variables, on top of the clean base. */
  env?: Record<string, string>;
  /** Whether the workspace is writable (exec) or read-only (ripgrep). */
  writable: boolean;
  /** Extra read-only binds (a program outside the system paths, e.g. ripgrep). */
  readOnly?: string[];
  /**
   * The command's stdio is a terminal the host opened for it (decision 180): the jail
   * keeps the session (no `--new-session`), so the terminal is its controlling tty, and
   * has no status descriptor (a terminal's child gets only stdio).
   */
  tty?: boolean;
}

/**
 * Wraps commands in a bubblewrap jail: the system read-only, the workspace the only
 * writable path, a private /tmp, /proc of its own PID namespace, no host environment,
 * no network unless configured, and a user namespace without capabilities. Killing the
 * outer bubblewrap kills the jail's PID 1 and, with it, everything in the namespace
 * (`setsid` and double forks included). Limits are applied by `prlimit` and, for the
 * process count, a pids cgroup joined before the jail starts (decision 080, 081).
 * @example const cmd = jail.wrap({ argv: ["/bin/bash", "-c", "ls"], cwd: ws.root, writable: true });
 */
export class Jail {
  readonly isolation: Isolation;
  readonly network: boolean;
  readonly limits: CommandLimits;
  readonly #root: string;
  readonly #cgroups: Cgroups | null;
  readonly #memory: Cgroups | null;
  readonly #bwrap: string | null;
  readonly #prlimit: string | null;
  readonly #system: string[];
  readonly #spillFolder: string | null;
  readonly #namespace: JailNamespace | null;
  #proc: "new" | "host";
  #procFellBack: string | null = null;

  /**
   * Checks that the jail works (a real bubblewrap run) and throws an error that says
   * what to do when it does not.
   */
  constructor(root: string, options: JailOptions) {
    this.#root = root;
    this.isolation = options.isolation;
    this.network = options.network;
    this.limits = options.limits;
    this.#cgroups = options.isolation === "bwrap" ? options.cgroups : null;
    this.#memory = options.isolation === "bwrap" ? (options.memory ?? null) : null;
    this.#prlimit = findExecutable("prlimit");
    this.#bwrap = options.isolation === "bwrap" ? findExecutable("bwrap") : null;
    this.#system = systemBinds();
    this.#spillFolder = options.spillFolder ?? null;
    this.#namespace = options.namespace ?? null;
    const proc = options.proc ?? "new";
    this.#proc = proc === "host" ? "host" : "new";
    if (options.isolation !== "bwrap") return;
    if (options.probe === false && proc !== "auto") return;
    try {
      this.#probe();
    } catch (err) {
      if (proc !== "auto") throw err;
      this.#procFellBack = (err as Error).message;
      this.#proc = "host";
      this.#probe();
    }
  }

  /** The /proc its commands get (`auto` resolved). */
  get proc(): "new" | "host" {
    return this.#proc;
  }

  /** True when the process count is limited (a pids cgroup is available). */
  get limitsProcesses(): boolean {
    return this.#cgroups !== null;
  }

  /** What an operator should be told at start: isolation off, or limits that cannot hold. */
  warnings(): string[] {
    if (this.isolation === "none") {
      return [
        "SANDBOX_ISOLATION=none: commands run WITHOUT a jail, as this host's user, and can read and write everything it can (install the Debian package 'bubblewrap' and unset SANDBOX_ISOLATION to isolate them)",
      ];
    }
    const out: string[] = [];
    if (this.#procFellBack !== null) {
      out.push(
        `SANDBOX_JAIL_PROC=auto: a /proc of the jail's own could not be mounted (${this.#procFellBack}); commands see this host's /proc read-only, with the host's own processes hidden`,
      );
    }
    if (!this.#cgroups) {
      out.push(
        "no writable pids cgroup (cgroup v1 'pids' or a v2 subtree with 'pids'): the number of processes per command is not limited; a fork bomb runs until its timeout",
      );
    }
    if (!this.#memory) {
      out.push(
        "no writable memory cgroup (cgroup v1 'memory' or a v2 subtree with 'memory'): memory is limited per process only, not across a command's processes",
      );
    }
    if (!this.#prlimit) {
      out.push(
        "'prlimit' (util-linux) not found: file size and memory per command are not limited",
      );
    }
    return out;
  }

  /**
   * Removes what the jail made on the host (its pids and memory cgroup parents), at
   * shutdown; answers whether none is left. A parent goes only after its commands'
   * cgroups, each of which goes a moment after its last process (cgroups.ts).
   */
  dispose(): boolean {
    const parents = [this.#cgroups, this.#memory].filter((c) => c !== null);
    for (const parent of parents) parent.dispose();
    return parents.every((c) => !existsSync(c.parent));
  }

  /** The spawn plan for one command. */
  wrap(req: JailRequest): JailedCommand {
    if (this.isolation === "none" || !this.#bwrap) return this.#unjailed(req);
    const cgroup = req.writable
      ? (this.#cgroups?.create(this.limits.maxProcesses + JAIL_OWN_PROCESSES) ?? null)
      : null;
    const memory = req.writable
      ? (this.#memory?.create(this.limits.maxCommandMemoryBytes) ?? null)
      : null;
    const bwrap = [this.#bwrap, ...this.#bwrapArgs(req), "--", ...req.argv];
    const limited = [...this.#prlimitArgs(), ...(this.#namespace?.enter ?? []), ...bwrap];
    const env = this.commandEnv(req.env);
    // The jail's first process joins its cgroups before it starts anything.
    const procs = [cgroup?.procsFile, memory?.procsFile].filter((f) => f !== undefined);
    const join = procs.map((_, i) => `echo $$ > "$${i}"`).join(" && ");
    const shift = procs.length > 1 ? ` && shift ${procs.length - 1}` : "";
    const [file, ...args] =
      procs.length > 0
        ? ["/bin/sh", "-c", `${join}${shift} && exec "$@"`, ...procs, ...limited]
        : limited;
    return {
      file: file!,
      args,
      env,
      statusFd: req.tty !== true,
      cgroup,
      memory,
      release: () => {
        cgroup?.remove();
        memory?.remove();
      },
    };
  }

  /** A jailed command's whole environment: the clean base, its namespace's proxy variables, then its own. */
  commandEnv(env: Record<string, string> = {}): Record<string, string> {
    return { ...cleanEnv(WORKSPACE_PATH), ...this.#namespace?.env, ...env };
  }

  /**
   * Where a command sees host path `abs` (a path in the workspace): under `/workspace`
   * in a jail, the host's own path without one (decision 243).
   * @example jail.pathInside(path.join(ws.root, "src")) // "/workspace/src"
   */
  pathInside(abs: string): string {
    if (this.isolation === "none" || !this.#bwrap) return abs;
    const rel = path.relative(this.#root, abs);
    return rel === "" ? WORKSPACE_PATH : `${WORKSPACE_PATH}/${rel.split(path.sep).join("/")}`;
  }

  #unjailed(req: JailRequest): JailedCommand {
    const [file, ...args] = [
      ...this.#prlimitArgs(),
      ...(this.#namespace?.enter ?? []),
      ...req.argv,
    ];
    return {
      file: file!,
      args,
      env: {
        ...cleanEnv(this.#root),
        PATH: process.env.PATH ?? JAIL_PATH,
        ...this.#namespace?.env,
        ...req.env,
      },
      statusFd: false,
      cgroup: null,
      memory: null,
      release: () => {},
    };
  }

  /**
   * The limits a command really gets: an rlimit can only be lowered, so where the host
   * itself runs under a lower hard limit, that one wins (Infinity: not limited).
   */
  get effectiveLimits(): CommandLimits {
    if (!this.#prlimit) {
      return {
        ...this.limits,
        maxFileBytes: Number.POSITIVE_INFINITY,
        maxMemoryBytes: Number.POSITIVE_INFINITY,
      };
    }
    return {
      ...this.limits,
      maxFileBytes: Math.min(this.limits.maxFileBytes, hostLimit("Max file size", "hard")),
      maxMemoryBytes: Math.min(this.limits.maxMemoryBytes, hostLimit("Max address space", "hard")),
    };
  }

  #prlimitArgs(): string[] {
    if (!this.#prlimit) return [];
    const { maxFileBytes, maxMemoryBytes } = this.effectiveLimits;
    return [this.#prlimit, `--fsize=${maxFileBytes}`, `--as=${maxMemoryBytes}`, "--"];
  }

  #bwrapArgs(req: JailRequest): string[] {
    const args = [...this.#system];
    for (const extra of req.readOnly ?? []) args.push("--ro-bind", extra, extra);
    args.push("--dev", "/dev", ...this.#procArgs(), "--tmpfs", "/tmp");
    // At one path whatever the host's folder is: a command sees nothing of the host's layout.
    args.push(req.writable ? "--bind" : "--ro-bind", this.#root, WORKSPACE_PATH);
    // In the jail's own root, not the workspace: nothing a command plants can move it.
    if (this.#spillFolder) args.push("--ro-bind", this.#spillFolder, SPILL_JAIL_PATH);
    // The jail's own root (where bubblewrap made the mount points) is read-only too.
    args.push("--remount-ro", "/");
    args.push("--unshare-all", "--unshare-user");
    // --disable-userns writes the jail's /proc/sys, which a host-bound /proc has read-only.
    if (this.#proc === "new") args.push("--disable-userns");
    if (this.network || this.#namespace) args.push("--share-net");
    args.push("--uid", String(JAIL_UID), "--gid", String(JAIL_UID));
    args.push("--die-with-parent", "--chdir", this.pathInside(req.cwd));
    if (!req.tty) args.push("--new-session", "--json-status-fd", "3");
    return args;
  }

  /**
   * `--proc`, or the host's /proc read-only with the entries of this host process, its
   * parent and PID 1 (the container's init) covered, so that no command reads their
   * environment (the host's token) or command line.
   */
  #procArgs(): string[] {
    if (this.#proc === "new") return ["--proc", "/proc"];
    const args = ["--ro-bind", "/proc", "/proc"];
    for (const pid of new Set([1, process.ppid, process.pid])) {
      if (pid > 0) args.push("--tmpfs", `/proc/${pid}`);
    }
    return args;
  }

  #probe(): void {
    if (!this.#bwrap) {
      throw new Error(
        "no working jail: 'bwrap' was not found on PATH. Install the Debian package 'bubblewrap' (apt-get install bubblewrap), or set SANDBOX_ISOLATION=none to run commands without isolation",
      );
    }
    const plan = this.wrap({ argv: ["/bin/true"], cwd: this.#root, writable: false });
    const run = spawnSync(plan.file, plan.args, {
      env: plan.env,
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    plan.release();
    if (run.status !== 0) {
      const why = (run.stderr || run.error?.message || `exit ${run.status}`).trim();
      throw new Error(
        `no working jail: bubblewrap failed to start (${why}). Check that user namespaces are allowed, or set SANDBOX_ISOLATION=none to run commands without isolation`,
      );
    }
  }
}

/**
 * The only variables a command starts with (README, "Sandbox isolation"): PATH, HOME
 * (the workspace root as the command sees it), LANG and TMPDIR. Nothing of the host's
 * environment.
 */
function cleanEnv(home: string): Record<string, string> {
  return { PATH: JAIL_PATH, HOME: home, LANG: "C.UTF-8", TMPDIR: "/tmp" };
}

/** bwrap arguments that show the system paths read-only (symlinks as symlinks) and mask secrets. */
function systemBinds(): string[] {
  const args: string[] = [];
  for (const p of SYSTEM_PATHS) {
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(p);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) args.push("--symlink", readlinkSync(p), p);
    else if (info.isDirectory()) args.push("--ro-bind", p, p);
  }
  for (const f of MASKED_FILES) if (existsSync(f)) args.push("--ro-bind", "/dev/null", f);
  return args;
}

/** True when `file` lies under one of the jail's system paths (visible inside it as is). */
export function insideSystemPaths(file: string): boolean {
  const real = path.resolve(file);
  return SYSTEM_PATHS.some((p) => real === p || real.startsWith(`${p}/`));
}
