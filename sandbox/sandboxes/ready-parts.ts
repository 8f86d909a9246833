import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { runCommand } from "../host-command.ts";
import { discardNetwork, prepareNetwork, type ReadyNetwork } from "../network/ready-network.ts";
import { ReadyPool } from "../ready-pool.ts";
import { discardDisk, prepareDisk, type ReadyDisk } from "./disk.ts";

/** What a new sandbox may take of what was made ahead: null where it makes its own. */
export interface MadeAhead {
  /** A disk of the sandbox's size, formatted and mounted for no one yet. */
  disk: ReadyDisk | null;
  network: ReadyNetwork | null;
}

/** How many of each part are ready now, and why the last one could not be made. */
export interface ReadyCounts {
  disks: number;
  networks: number;
  size: number;
  lastError: string | null;
}

/**
 * The parts of created sandboxes a host makes before anyone asks (decision 225): up to
 * `size` disks of the default size, formatted and mounted for no one yet, and as many
 * network namespaces with their bridges running. A create takes one of each, the slow
 * part of both done, and the pools refill behind it. They live in `<dir>/.ready`, where
 * no sandbox id can be; a taken disk's folder is renamed to its sandbox's (decision
 * 257), a taken network stays in its folder there until its sandbox ends. A host that starts removes what the last
 * one left there: nothing in it outlives the process that made it.
 */
export class ReadyParts {
  readonly #disks: ReadyPool<ReadyDisk> | null;
  readonly #networks: ReadyPool<ReadyNetwork> | null;
  readonly #diskBytes: number;
  readonly #size: number;

  private constructor(
    disks: ReadyPool<ReadyDisk> | null,
    networks: ReadyPool<ReadyNetwork> | null,
    diskBytes: number,
    size: number,
  ) {
    this.#disks = disks;
    this.#networks = networks;
    this.#diskBytes = diskBytes;
    this.#size = size;
  }

  /**
   * Clears `<dir>/.ready` and starts filling it: disks of `diskBytes` when `images`
   * (loop-mounted disks), networks when `networks` (root and the jail); nothing when
   * `size` is 0.
   * @example const ready = await ReadyParts.open("/srv/sandboxes", 4, 1 << 30, true, true);
   */
  static async open(
    dir: string,
    size: number,
    diskBytes: number,
    images: boolean,
    networks: boolean,
  ): Promise<ReadyParts> {
    const root = path.join(dir, READY_DIR);
    await removeLeftovers(root);
    const disks = images && size > 0 ? path.join(root, "disks") : null;
    const nets = networks && size > 0 ? path.join(root, "networks") : null;
    for (const folder of [disks, nets]) if (folder) await mkdir(folder, { recursive: true });
    const name = () => randomBytes(8).toString("hex");
    const parts = new ReadyParts(
      disks === null
        ? null
        : new ReadyPool(size, () => prepareDisk(path.join(disks, name()), diskBytes), discardDisk, {
            refillDelayMs: REFILL_DELAY_MS,
          }),
      nets === null
        ? null
        : new ReadyPool(size, () => prepareNetwork(path.join(nets, name())), discardNetwork, {
            refillDelayMs: REFILL_DELAY_MS,
          }),
      diskBytes,
      size,
    );
    parts.#disks?.start();
    parts.#networks?.start();
    return parts;
  }

  /** A ready disk of `bytes`, or null (none ready, or another size). */
  takeDisk(bytes: number): ReadyDisk | null {
    return bytes === this.#diskBytes ? (this.#disks?.take() ?? null) : null;
  }

  takeNetwork(): ReadyNetwork | null {
    return this.#networks?.take() ?? null;
  }

  counts(): ReadyCounts {
    return {
      disks: this.#disks?.ready ?? 0,
      networks: this.#networks?.ready ?? 0,
      size: this.#size,
      lastError: this.#disks?.lastError ?? this.#networks?.lastError ?? null,
    };
  }

  /** Resolves once both pools are full (tests and benchmarks wait for it). */
  async filled(): Promise<void> {
    await Promise.all([this.#disks?.filled(), this.#networks?.filled()]);
  }

  /** Discards everything still ready (host shutdown). */
  async close(): Promise<void> {
    await Promise.all([this.#disks?.close(), this.#networks?.close()]);
  }
}

/**
 * How long after a take the pools start refilling: the sandbox just made runs its first
 * command meanwhile, which a refill (mkfs, a Node process starting) would slow on a
 * small host.
 */
const REFILL_DELAY_MS = 1_000;

/** The folder under `SANDBOXES_DIR` of what is made ahead; a dot, so no sandbox id matches it. */
export const READY_DIR = ".ready";

/** Unmounts what a host that stopped left mounted under `root` (namespace files), then removes it. */
async function removeLeftovers(root: string): Promise<void> {
  const { stdout } = await runCommand("findmnt", ["-rn", "-o", "TARGET"]).catch(() => ({
    stdout: "",
  }));
  for (const target of stdout.split("\n")) {
    if (target.startsWith(`${root}/`)) await runCommand("umount", ["-l", target]).catch(() => {});
  }
  await rm(root, { recursive: true, force: true });
}
