import { mkdir, statfs } from "node:fs/promises";
import path from "node:path";
import type { ExecLoad, SandboxLimits } from "../../src/protocol/index.ts";
import type { NetworkPolicy } from "../../src/protocol/network-policy.ts";
import { createSandboxApp, type SandboxApp } from "../app.ts";
import type { SandboxConfig } from "../config.ts";
import type { Cgroups } from "../jail/cgroups.ts";
import type { EgressTotals } from "../network/connection-log.ts";
import { discardNetwork } from "../network/ready-network.ts";
import { proxyEnv, SandboxNetwork } from "../network/sandbox-network.ts";
import { SandboxDisk } from "./disk.ts";
import type { MadeAhead } from "./ready-parts.ts";
import type { SandboxRecord } from "./sandbox-record.ts";

/** What `GET /v1/sandboxes/:id` answers. */
export interface SandboxInfo {
  id: string;
  createdAt: string;
  limits: SandboxLimits;
  runningExecs: number;
  disk: { mode: "loop" | "none"; totalBytes: number; usedBytes: number; freeBytes: number };
  /** Its policy and egress totals; null where the host gives sandboxes no network namespace. */
  network: { policy: NetworkPolicy; totals: EgressTotals } | null;
  /** How busy its commands are, as its `/healthz` says (the Worker admits calls by it). */
  execs: ExecLoad;
}

/** Jail processes per command besides the command's own (bubblewrap outside and inside). */
const JAIL_PROCESSES_PER_EXEC = 2;

/** How often a closing sandbox looks again for its cgroup to be gone, and for how long. */
const CGROUP_RETRY_MS = 10;
const CGROUP_GONE_MS = 2_000;

/**
 * One created sandbox on this host: its own folder (`<dir>/<id>`) with its own file
 * system in it (`disk/`, holding `workspace/` and `spill/` side by side), its own jail bound to that workspace only,
 * its own exec registry and its own pids cgroup under which every command's is made.
 */
export class HostedSandbox {
  readonly id: string;
  readonly limits: SandboxLimits;
  readonly createdAt: Date;
  readonly parts: SandboxApp;
  /** Directory of its spill files, beside (never inside) the workspace. */
  readonly spillDir: string;
  readonly #disk: SandboxDisk;
  /** Its network namespace, bridge and egress proxy; null where the host cannot make them. */
  readonly network: SandboxNetwork | null;

  private constructor(
    record: Pick<SandboxRecord, "id" | "limits" | "createdAt">,
    disk: SandboxDisk,
    parts: SandboxApp,
    network: SandboxNetwork | null,
  ) {
    const { id, limits } = record;
    this.createdAt = new Date(record.createdAt);
    this.id = id;
    this.network = network;
    this.limits = limits;
    this.#disk = disk;
    this.parts = parts;
    this.spillDir = path.join(disk.mountPoint, "spill");
  }

  /**
   * Makes the disk, the workspace and spill folders, the jail and the cgroup of a new
   * sandbox (`fresh`), or reopens those of `record` that a host that stopped left
   * (decision 246): its files are kept, its processes were gone with that host, and its
   * network namespace is made anew with the recorded policy. A new sandbox takes the
   * parts in `ahead` (made before it was asked for, decision 225) and makes the rest.
   * @example const sbx = await HostedSandbox.open(config, "/srv/sbx/sbx_default_…", record, cgroups, true);
   */
  static async open(
    config: SandboxConfig,
    folder: string,
    record: SandboxRecord,
    parent: Cgroups | null,
    fresh: boolean,
    ahead: MadeAhead = { disk: null, network: null },
  ): Promise<HostedSandbox> {
    const { id, limits, policy } = record;
    // The made-ahead network until a SandboxNetwork holds it: discarded if the open fails first.
    let spareNetwork = ahead.network;
    let disk: SandboxDisk;
    try {
      disk = fresh
        ? await SandboxDisk.create(folder, record.disk, limits.diskBytes, ahead.disk)
        : await SandboxDisk.reopen(folder, record.disk, record.layout !== 2);
    } catch (err) {
      if (spareNetwork) await discardNetwork(spareNetwork);
      throw err;
    }
    let cgroups: Cgroups | null = null;
    let network: SandboxNetwork | null = null;
    const { mountPoint } = disk;
    try {
      await mkdir(path.join(mountPoint, "workspace"), { recursive: !fresh });
      await mkdir(path.join(mountPoint, "spill"), { recursive: !fresh });
      // In the sandbox's folder, where no jail looks: the namespace file and both sockets.
      const made = spareNetwork;
      spareNetwork = null;
      network = !config.egress.available
        ? null
        : made
          ? await SandboxNetwork.attach(made, id, policy, limits.egressBytes, config.egress)
          : await SandboxNetwork.open(
              path.join(folder, "net"),
              id,
              policy,
              limits.egressBytes,
              config.egress,
            );
      cgroups =
        parent?.child(id, limits.maxProcesses + JAIL_PROCESSES_PER_EXEC * limits.maxExecs) ?? null;
      const parts = createSandboxApp(
        {
          ...config,
          root: path.join(mountPoint, "workspace"),
          // Its commands run `maxExecs` at once; the rest wait their turn (decision 248).
          maxRunningExecs: limits.maxExecs,
          // Its spills on its own disk, beside its workspace, outside the jail's reach.
          spillDir: path.join(mountPoint, "spill"),
          limits: {
            maxProcesses: limits.maxProcesses,
            maxMemoryBytes: limits.maxMemoryBytes,
            maxFileBytes: limits.maxFileBytes,
            maxCommandMemoryBytes: Math.min(
              config.limits.maxCommandMemoryBytes,
              limits.maxMemoryBytes,
            ),
          },
        },
        () => cgroups,
        network && { enter: network.namespace.enter(), env: proxyEnv() },
        // The host's own jail has proved bubblewrap (decision 227).
        false,
      );
      // Its first command's jail (decision 276), started once the create's answer is on its way.
      if (fresh) setImmediate(() => parts.ahead.start(config.sandboxes?.jailAheadMs));
      return new HostedSandbox(record, disk, parts, network);
    } catch (err) {
      if (spareNetwork) await discardNetwork(spareNetwork);
      await network?.close();
      cgroups?.dispose();
      await (fresh ? disk.remove() : disk.release());
      throw err;
    }
  }

  /** Its commands running now (not those waiting their turn). */
  runningExecs(): number {
    return this.parts.gate.running;
  }

  async info(): Promise<SandboxInfo> {
    const fs = await statfs(this.#disk.mountPoint);
    const total = fs.blocks * fs.bsize;
    const free = fs.bavail * fs.bsize;
    return {
      id: this.id,
      createdAt: this.createdAt.toISOString(),
      limits: this.limits,
      runningExecs: this.runningExecs(),
      disk: {
        mode: this.#disk.mode,
        totalBytes: this.#disk.mode === "loop" ? total : this.limits.diskBytes,
        usedBytes: (fs.blocks - fs.bfree) * fs.bsize,
        freeBytes: free,
      },
      network: this.network && { policy: this.network.policy, totals: this.network.view().totals },
      execs: this.parts.gate.load(),
    };
  }

  /** What a host that starts again reopens it from. */
  record(): SandboxRecord {
    return {
      id: this.id,
      createdAt: this.createdAt.toISOString(),
      limits: this.limits,
      disk: this.#disk.mode,
      policy: this.network?.policy ?? { allow: [] },
      ...(this.#disk.flat ? {} : { layout: 2 as const }),
    };
  }

  /** Kills its commands, then removes everything it had (`DELETE`). */
  async remove(killGraceMs: number): Promise<void> {
    await this.close(killGraceMs);
    await this.#disk.remove();
  }

  /**
   * Kills its commands (SIGTERM, then SIGKILL after the grace) and lets go of its
   * network, cgroup and mount, keeping its files for the next host (host shutdown).
   */
  async close(killGraceMs: number): Promise<void> {
    await this.parts.registry.killAll(killGraceMs + 1000);
    await this.parts.ahead.end();
    await this.network?.close();
    // Its spill folder is held open by descriptor: left open, it would keep the disk's
    // file system, loop device and deleted image alive after the unmount (until the host exits).
    this.parts.spills.close();
    await this.#disk.release();
    // Each command's cgroup goes a moment after its last process (cgroups.ts); the
    // sandbox's own, pids and memory, then follow. Looked at again at once, then every
    // 10 ms, for 2 s at most: most are gone at the first try, and a delete should not
    // wait a fixed 100 ms.
    for (let waited = 0; !this.parts.jail.dispose(); waited += CGROUP_RETRY_MS) {
      if (waited >= CGROUP_GONE_MS) break;
      await new Promise((resolve) => setTimeout(resolve, CGROUP_RETRY_MS));
    }
  }
}
