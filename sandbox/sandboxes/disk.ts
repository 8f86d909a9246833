import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { runCommand, unmount } from "../host-command.ts";
import { mountNosuid, type NosuidMount } from "../nosuid-mount.ts";
import type { DiskMode } from "./config.ts";

/** Where a sandbox's disk is, under its folder `<dir>/<id>`. */
export interface DiskPaths {
  /** Where the file system is mounted (`loop`) or the plain folder is (`none`). */
  mountPoint: string;
  /** The `loop` mode's image. */
  image: string;
}

/**
 * The paths of the disk of the sandbox whose folder is `folder` (decision 257): mounted
 * at `<folder>/disk`, its image `<folder>/disk.img` beside it, so that a disk made ahead
 * becomes a sandbox's by a rename of the folder holding both, with no mount moved.
 * A sandbox recorded before that (`flat`) has its disk mounted at `<folder>` itself and
 * its image at `<folder>.img`.
 * @example diskPaths("/srv/sandboxes/sbx_1") // { mountPoint: "/srv/sandboxes/sbx_1/disk", image: "/srv/sandboxes/sbx_1/disk.img" }
 */
export function diskPaths(folder: string, flat = false): DiskPaths {
  return flat
    ? { mountPoint: folder, image: `${folder}.img` }
    : { mountPoint: path.join(folder, "disk"), image: path.join(folder, "disk.img") };
}

/**
 * The file system of one sandbox, mounted at `mountPoint`. In `loop` mode it is an ext4
 * image of exactly the quota, sparse on the host and loop-mounted, so a command that
 * writes past it gets ENOSPC from its own file system, whatever the host has free
 * (decision 141). In `none` mode it is a plain directory and nothing bounds it.
 */
export class SandboxDisk {
  /** The sandbox's folder, `<dir>/<id>`: the disk and its image, and the host's files beside them. */
  readonly folder: string;
  readonly mountPoint: string;
  readonly mode: DiskMode;
  /** Laid out as before decision 257 (a sandbox an older host made). */
  readonly flat: boolean;
  readonly #image: string;
  #mounted = false;
  /** In `none` mode: the folder bound onto itself nosuid,nodev (decision 240). */
  #nosuid: NosuidMount | null = null;

  private constructor(folder: string, mode: DiskMode, flat: boolean) {
    const paths = diskPaths(folder, flat);
    this.folder = folder;
    this.mountPoint = paths.mountPoint;
    this.mode = mode;
    this.flat = flat;
    this.#image = paths.image;
  }

  /**
   * Makes and mounts the file system in the new folder `folder`, from `ready` (a disk
   * of `bytes` that `prepareDisk` made, mounted for no one yet, whose folder is renamed
   * to `folder`) or from nothing; throws (after removing what it made) if the image
   * cannot be made or mounted.
   * @example const disk = await SandboxDisk.create("/srv/sandboxes/sbx_1", "loop", 1 << 30);
   */
  static async create(
    folder: string,
    mode: DiskMode,
    bytes: number,
    ready: ReadyDisk | null = null,
  ): Promise<SandboxDisk> {
    const disk = new SandboxDisk(folder, mode, false);
    if (ready) {
      // The mount goes with its folder: a rename in one file system, no process, no
      // mount table change (a `mount --move` here was a process and a lock per create).
      try {
        await rename(ready.folder, folder);
      } catch (err) {
        await discardDisk(ready);
        throw new Error(`could not take a disk made ahead: ${stderrOf(err)}`);
      }
      disk.#mounted = true;
      return disk;
    }
    await mkdir(disk.mountPoint, { recursive: true });
    if (mode === "none") {
      disk.#nosuid = await mountNosuid(disk.mountPoint);
      return disk;
    }
    try {
      await formatImage(disk.#image, bytes);
      await mountImage(disk.#image, disk.mountPoint);
      disk.#mounted = true;
      // ext4's own lost+found is no business of the sandbox's.
      await rm(`${disk.mountPoint}/lost+found`, { recursive: true, force: true });
      return disk;
    } catch (err) {
      await disk.remove();
      throw new Error(`could not make the sandbox's ${bytes}-byte disk: ${stderrOf(err)}`);
    }
  }

  /**
   * Mounts the disk a host that stopped left (decision 246): in `loop` mode its image,
   * adopting a mount still in place (a host killed with -9) rather than stacking another;
   * in `none` mode its folder, adopting a leftover self-bind. Throws `DiskGone` when the
   * image or folder is not there.
   * @example const disk = await SandboxDisk.reopen("/srv/sandboxes/sbx_1", "loop", false);
   */
  static async reopen(folder: string, mode: DiskMode, flat: boolean): Promise<SandboxDisk> {
    const disk = new SandboxDisk(folder, mode, flat);
    const { mountPoint } = disk;
    if (mode === "none") {
      if (!existsSync(mountPoint)) throw new DiskGone("its folder is missing");
      disk.#nosuid = await mountNosuid(mountPoint);
      return disk;
    }
    if (!(await isMountPoint(mountPoint))) {
      if (!existsSync(disk.#image)) throw new DiskGone("its disk image is missing");
      await mkdir(mountPoint, { recursive: true });
      try {
        await mountImage(disk.#image, mountPoint);
      } catch (err) {
        console.error(`sandbox disk ${disk.#image} does not mount: ${stderrOf(err)}`);
        throw new DiskGone("its disk image does not mount (the host's log says why)");
      }
    }
    disk.#mounted = true;
    return disk;
  }

  /** Unmounts (lazily when something still holds a file open), keeping the files: host shutdown. */
  async release(): Promise<void> {
    await this.#nosuid?.release();
    this.#nosuid = null;
    if (this.#mounted) {
      await unmount(this.mountPoint);
      this.#mounted = false;
    }
  }

  /** Unmounts and deletes everything: the folder, and a flat layout's image beside it. */
  async remove(): Promise<void> {
    await this.release();
    await rm(this.folder, { recursive: true, force: true });
    await rm(this.#image, { force: true });
  }
}

/**
 * Makes `file` (which must not exist) an empty ext4 file system of exactly `bytes`,
 * sparse on the host, as every sandbox disk is made.
 * @example await formatImage("/srv/sandboxes/.pool/disks/3f0c.img", 1 << 30);
 */
export async function formatImage(file: string, bytes: number): Promise<void> {
  await writeFile(file, "", { flag: "wx" });
  await truncate(file, bytes);
  // No journal: a host process that dies leaves the mount and its cache to the kernel,
  // and the next host reopens it (decision 246); only a machine crash may lose the last
  // writes. lazy_itable_init keeps mkfs at ~20 ms. 5% of the blocks are reserved for the
  // host: spills share the quota, and when a command fills the disk the host must still
  // be able to write the output that says so (decision 141). The reserve belongs to an
  // id no process of the host runs as (the mount's resuid/resgid), so only
  // CAP_SYS_RESOURCE, which the host has and no jailed command does, can write into it.
  await runCommand("mkfs.ext4", [
    "-q",
    "-F",
    "-m",
    String(RESERVED_PERCENT),
    "-O",
    "^has_journal",
    "-E",
    "lazy_itable_init=1,root_owner=0:0",
    file,
  ]);
}

/**
 * A sandbox disk made ahead (decision 225): a folder laid out as a sandbox's
 * (`diskPaths`), its image mounted for no one yet.
 */
export interface ReadyDisk {
  folder: string;
}

/**
 * Makes the folder `folder` and in it a disk as `formatImage` makes one, mounted as a
 * sandbox's disk is mounted, with ext4's lost+found removed: everything but the
 * sandbox's own folders. Throws after removing what it made.
 * @example const ready = await prepareDisk("/srv/sandboxes/.ready/disks/3f0c", 1 << 30);
 */
export async function prepareDisk(folder: string, bytes: number): Promise<ReadyDisk> {
  const ready = { folder };
  const { mountPoint, image } = diskPaths(folder);
  try {
    await mkdir(mountPoint, { recursive: true });
    await formatImage(image, bytes);
    await mountImage(image, mountPoint);
    await rm(`${mountPoint}/lost+found`, { recursive: true, force: true });
    return ready;
  } catch (err) {
    await discardDisk(ready);
    throw new Error(`could not make a ${bytes}-byte disk ahead: ${stderrOf(err)}`);
  }
}

/** Unmounts a ready disk and removes its folder, image and all. */
export async function discardDisk(ready: ReadyDisk): Promise<void> {
  const { mountPoint } = diskPaths(ready.folder);
  await unmount(mountPoint);
  await rm(ready.folder, { recursive: true, force: true });
}

/**
 * Loop-mounts image `file` at `dir` nosuid,nodev (decision 240), its reserve owned by
 * an id no process runs as (decision 141).
 */
async function mountImage(file: string, dir: string): Promise<void> {
  const reserve = `resuid=${RESERVE_OWNER},resgid=${RESERVE_OWNER}`;
  await runCommand("mount", ["-o", `loop,nosuid,nodev,${reserve}`, file, dir]);
}

/** The reason a sandbox's disk cannot be reopened: the sandbox is lost. */
export class DiskGone extends Error {}

/**
 * Removes what a host that stopped left under `dir` for sandboxes it holds no record of
 * (a create cut off before its record was written): mounts first, then files; only
 * entries named like a sandbox (`sbx_…`), whatever else the directory holds. Sandboxes
 * in `kept` (those with a record) are left for reopening.
 */
export async function removeUnrecordedSandboxes(dir: string, kept: Set<string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const { stdout } = await runCommand("findmnt", ["-rn", "-o", "TARGET"]).catch(() => ({
    stdout: "",
  }));
  for (const target of stdout.split("\n")) {
    const rel = target.slice(dir.length + 1);
    if (!target.startsWith(`${dir}/`) || !STALE_MOUNT.test(rel)) continue;
    if (kept.has(rel.split("/")[0] ?? "")) continue;
    await runCommand("umount", ["-l", target]).catch(() => {});
  }
  for (const name of await readdir(dir)) {
    if (STALE.test(name) && !kept.has(name.replace(/\.img$/, ""))) {
      await rm(`${dir}/${name}`, { recursive: true, force: true });
    }
  }
}

/** Whether `dir` is itself a mount point (a disk a killed host left mounted). */
async function isMountPoint(dir: string): Promise<boolean> {
  return runCommand("findmnt", ["-n", "--mountpoint", dir]).then(
    () => true,
    () => false,
  );
}

/** Share of a sandbox disk only the host may write (its spills once a command filled the rest). */
const RESERVED_PERCENT = 5;

/** Owner of the reserve: an id no process runs as (the jail's files are written as root). */
const RESERVE_OWNER = 65534;

const STALE = /^sbx_[a-z0-9_-]+(\.img)?$/;
/**
 * A sandbox's disk (at its folder, or in it since decision 257), or its network
 * namespace's file (decision 181), left mounted.
 */
const STALE_MOUNT = /^sbx_[a-z0-9_-]+(\/disk|\/net\/ns)?$/;

function stderrOf(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(err)).split("\n")[0] ?? "";
}
