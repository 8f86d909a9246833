import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { SandboxLimits } from "../../src/protocol/index.ts";
import type { NetworkPolicy } from "../../src/protocol/network-policy.ts";
import type { SandboxConfig } from "../config.ts";
import { SandboxError } from "../errors.ts";
import { Cgroups } from "../jail/cgroups.ts";
import type { SandboxesConfig } from "./config.ts";
import { DiskGone, removeUnrecordedSandboxes } from "./disk.ts";
import { HostedSandbox } from "./hosted-sandbox.ts";
import { ReadyParts } from "./ready-parts.ts";
import { readRecords, removeRecord, writeRecord } from "./sandbox-record.ts";

/**
 * A sandbox id as the Worker makes it: `sbx_<host>_<20 hex>` (the host it was placed
 * on, then its own random part; docs/decisions/140).
 */
export const SANDBOX_ID_PATTERN = /^sbx_[a-z0-9-]{1,32}_[0-9a-f]{20}$/;

/**
 * Every sandbox this host holds, by id, each with a record beside its disk
 * (`sandbox-record.ts`). A host that starts reopens every recorded sandbox (decision
 * 246): the last host's processes are gone, its files, disks, spills and policies stay.
 * A sandbox whose record outlived its disk is lost, and says so to whoever asks for it.
 */
export class SandboxSet {
  readonly config: SandboxesConfig;
  #host: SandboxConfig;
  readonly #cgroups: Cgroups | null;
  readonly #sandboxes = new Map<string, HostedSandbox>();
  readonly #creating = new Set<string>();
  /** Sandboxes recorded here that could not be reopened, with why (until deleted). */
  readonly #lost = new Map<string, string>();
  /** Disks and networks made ahead for the next creates (decision 225). */
  #ready: ReadyParts | null = null;

  private constructor(host: SandboxConfig, config: SandboxesConfig) {
    this.#host = host;
    this.config = config;
    this.#cgroups = host.isolation === "bwrap" ? Cgroups.find("pids") : null;
  }

  /**
   * Opens the set for a host, reopening the sandboxes a previous host recorded in
   * `config.dir` and removing what it left without a record (a create cut off).
   * @example const set = await SandboxSet.open(config, config.sandboxes);
   */
  static async open(host: SandboxConfig, config: SandboxesConfig): Promise<SandboxSet> {
    await mkdir(config.dir, { recursive: true });
    const { records, unreadable } = await readRecords(config.dir, (id) =>
      SANDBOX_ID_PATTERN.test(id),
    );
    await removeUnrecordedSandboxes(
      config.dir,
      new Set([...records.map((r) => r.id), ...unreadable.map((u) => u.id)]),
    );
    const set = new SandboxSet(host, config);
    for (const { id, reason } of unreadable) set.#lost.set(id, reason);
    for (const record of records) {
      try {
        const sandbox = await HostedSandbox.open(
          set.#host,
          path.join(config.dir, record.id),
          record,
          set.#cgroups,
          false,
        );
        set.#sandboxes.set(record.id, sandbox);
      } catch (err) {
        // The operator's log gets the detail; callers get words without host paths.
        if (!(err instanceof DiskGone)) console.error(`sandbox ${record.id} did not reopen:`, err);
        set.#lost.set(
          record.id,
          err instanceof DiskGone ? err.message : "it did not reopen (the host's log says why)",
        );
      }
    }
    const poolSize = config.poolSize ?? 0;
    set.#ready = await ReadyParts.open(
      config.dir,
      poolSize,
      config.limits.diskBytes,
      config.disk === "loop",
      poolSize > 0 && host.egress.available,
    );
    return set;
  }

  /** What is made ahead now; `filled()` resolves once it is all there (tests, benchmarks). */
  get ready(): Pick<ReadyParts, "counts" | "filled"> | null {
    return this.#ready;
  }

  /** What an operator should be told at start. */
  warnings(): string[] {
    const lost = [...this.#lost].map(
      ([id, reason]) =>
        `sandbox ${id} is lost: ${reason}; its record is kept so callers are told, DELETE /v1/sandboxes/${id} removes it`,
    );
    return [...lost, ...this.#diskWarnings()];
  }

  #diskWarnings(): string[] {
    if (this.config.disk === "none") {
      return [
        "SANDBOX_DISK=none: created sandboxes are plain directories and nothing bounds what their commands write (run the host as root for loop-mounted disks)",
      ];
    }
    // The disk's 5% reserve is the host's only through CAP_SYS_RESOURCE (decision 141).
    return hasCapability(CAP_SYS_RESOURCE)
      ? []
      : [
          "the host lacks CAP_SYS_RESOURCE: it cannot write into a sandbox disk's 5% reserve, so once a command fills its disk the output after that is cut at once (the call says so: 'the disk is full (ENOSPC)'); grant the capability to keep room for it",
        ];
  }

  /**
   * Adds the port the host itself listens on (known once it listens) to the ports no
   * sandbox's egress may reach on a non-public address (decision 181).
   */
  reservePort(port: number): void {
    const egress = this.#host.egress;
    this.#host = {
      ...this.#host,
      egress: { ...egress, reservedPorts: [...new Set([...egress.reservedPorts, port])] },
    };
  }

  get(id: string): HostedSandbox | undefined {
    return this.#sandboxes.get(id);
  }

  /** The sandbox named `id`, or a 404 saying it is not on this host. */
  find(id: string): HostedSandbox {
    const sandbox = SANDBOX_ID_PATTERN.test(id) ? this.#sandboxes.get(id) : undefined;
    const lost = this.#lost.get(id);
    if (!sandbox && lost !== undefined) {
      throw new SandboxError(
        "not_found",
        `sandbox '${id}' was on this host but is lost: ${lost}; delete it and create another`,
      );
    }
    if (!sandbox) {
      throw new SandboxError(
        "not_found",
        `no sandbox '${id}' on this host (never created here, or deleted)`,
      );
    }
    return sandbox;
  }

  list(): HostedSandbox[] {
    return [...this.#sandboxes.values()];
  }

  /**
   * Creates sandbox `id` with the host's limits, lowered where `requested` asks; a
   * request above the host's limit is a 400 that names it.
   */
  async create(
    id: string,
    requested: Partial<SandboxLimits> = {},
    policy: NetworkPolicy = { allow: [] },
  ): Promise<HostedSandbox> {
    if (this.#sandboxes.has(id) || this.#creating.has(id) || this.#lost.has(id)) {
      throw new SandboxError("conflict", `sandbox '${id}' already exists on this host`);
    }
    if (this.#sandboxes.size + this.#creating.size >= this.config.maxSandboxes) {
      throw new SandboxError(
        "too_many_requests",
        `this host holds ${this.config.maxSandboxes} sandboxes (SANDBOX_MAX_SANDBOXES); delete one or place the sandbox on another host`,
        FULL_HOST_RETRY_AFTER_SEC,
      );
    }
    const limits = this.#limitsFor(requested);
    if (policy.allow.length > 0 && !this.#host.egress.available) throw noNetwork();
    this.#creating.add(id);
    try {
      const record = {
        id,
        createdAt: new Date().toISOString(),
        limits,
        disk: this.config.disk,
        policy,
        layout: 2 as const,
      };
      const folder = path.join(this.config.dir, id);
      const ahead = {
        disk: record.disk === "loop" ? (this.#ready?.takeDisk(limits.diskBytes) ?? null) : null,
        network: this.#host.egress.available ? (this.#ready?.takeNetwork() ?? null) : null,
      };
      const sandbox = await HostedSandbox.open(
        this.#host,
        folder,
        record,
        this.#cgroups,
        true,
        ahead,
      );
      try {
        await writeRecord(this.config.dir, sandbox.record());
      } catch (err) {
        await sandbox.remove(this.#host.killGraceMs);
        throw err;
      }
      this.#sandboxes.set(id, sandbox);
      return sandbox;
    } finally {
      this.#creating.delete(id);
    }
  }

  /** Writes sandbox `id`'s record again (its policy changed). */
  async saveRecord(id: string): Promise<void> {
    await writeRecord(this.config.dir, this.find(id).record());
  }

  /** Stops the sandbox's commands and removes its workspace, spills, disk and record. */
  async remove(id: string): Promise<void> {
    if (this.#lost.has(id) && !this.#sandboxes.has(id)) {
      this.#lost.delete(id);
      await removeUnrecordedSandboxes(this.config.dir, new Set(this.#sandboxes.keys()));
      await removeRecord(this.config.dir, id);
      return;
    }
    const sandbox = this.find(id);
    this.#sandboxes.delete(id);
    await removeRecord(this.config.dir, id);
    await sandbox.remove(this.#host.killGraceMs);
  }

  /** Stops every sandbox's commands and lets go of its mounts, keeping its files and record (host shutdown). */
  async closeAll(): Promise<void> {
    const all = this.list();
    this.#sandboxes.clear();
    await Promise.all([...all.map((s) => s.close(this.#host.killGraceMs)), this.#ready?.close()]);
    this.#cgroups?.dispose();
  }

  #limitsFor(requested: Partial<SandboxLimits>): SandboxLimits {
    const limits = { ...this.config.limits };
    for (const key of Object.keys(limits) as (keyof SandboxLimits)[]) {
      const ask = requested[key];
      if (ask === undefined) continue;
      if (ask > limits[key]) {
        throw new SandboxError(
          "bad_request",
          `limits.${key}: ${ask} is above this host's ${limits[key]}; ask for at most that (the operator raises it)`,
        );
      }
      limits[key] = ask;
    }
    return limits;
  }
}

/**
 * `Retry-After` of a create refused by a full host: sandboxes leave by delete or idle
 * timeout, neither of which the host can foresee, so a short wait and a retry.
 */
export const FULL_HOST_RETRY_AFTER_SEC = 10;

/** The refusal of a policy on a host that cannot give sandboxes a network of their own. */
export function noNetwork(): SandboxError {
  return new SandboxError(
    "bad_request",
    "network: this sandbox host gives sandboxes no network (it needs the bubblewrap jail and, when not root, user namespaces with 'unshare' and 'ip' to make each one a network namespace); leave network out",
  );
}

/** Capability number of CAP_SYS_RESOURCE (linux/capability.h). */
const CAP_SYS_RESOURCE = 24;

/** Whether this process has capability `n` in effect (from /proc/self/status). */
function hasCapability(n: number): boolean {
  try {
    const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return hex !== undefined && ((BigInt(`0x${hex}`) >> BigInt(n)) & 1n) === 1n;
  } catch {
    return false;
  }
}
