/**
 * A workspace folder on a mount with `nosuid` and `nodev`, as the host sees it
 * (decision 240). The jail already binds the workspace nosuid,nodev, but what a command
 * leaves there is also reachable from the host, outside any jail: a setuid copy of a
 * program, made by the jail's user (root on the host when the host runs as root),
 * would run as root for whoever starts it there. On a nosuid mount the kernel ignores
 * setuid and setgid bits and file capabilities; on a nodev mount device nodes do not
 * open.
 */
import { mkdir } from "node:fs/promises";
import { runCommand, unmount } from "./host-command.ts";

/** What was done to make a folder nosuid,nodev, and how to undo it. */
export interface NosuidMount {
  /** Why the folder could not be made nosuid,nodev (for the operator), or null. */
  warning: string | null;
  /** Removes the bind mount this made, if any (a mount found in place is left). */
  release(): Promise<void>;
}

/**
 * Makes `dir` (created if missing) sit on a nosuid,nodev mount: nothing to do when the
 * mount holding it already has both, else (as root) a bind mount of the folder onto
 * itself, remounted nosuid,nodev. A host that is not root cannot mount, and needs not:
 * the files its commands make belong to its own user, so a setuid bit gives no one more
 * than that user has.
 * @example const mount = await mountNosuid("/srv/workspace"); … await mount.release();
 */
export async function mountNosuid(dir: string): Promise<NosuidMount> {
  await mkdir(dir, { recursive: true });
  const unchanged = (warning: string | null): NosuidMount => ({
    warning,
    release: async () => {},
  });
  const release = async () => {
    await unmount(dir);
  };
  if (process.geteuid?.() === 0 && (await isLeftoverSelfBind(dir))) {
    return { warning: null, release };
  }
  if (await hasNosuidNodev(dir)) return unchanged(null);
  if (process.geteuid?.() !== 0) return unchanged(null);
  try {
    await runCommand("mount", ["--bind", dir, dir]);
  } catch (err) {
    return unchanged(`the workspace could not be made nosuid,nodev (${stderrOf(err)})`);
  }
  try {
    await runCommand("mount", ["-o", "remount,bind,nosuid,nodev", dir]);
  } catch (err) {
    await release();
    return unchanged(`the workspace could not be made nosuid,nodev (${stderrOf(err)})`);
  }
  return { warning: null, release };
}

/**
 * True when `dir` is a nosuid,nodev bind of itself: what this module makes, left behind by
 * a host that was killed before it could release it. The host that starts next adopts it
 * (and releases it as it stops) rather than stacking another. An operator's own filesystem
 * mounted at `dir` is not taken for one: its root inside the filesystem is `/`, not a tail
 * of `dir`.
 */
async function isLeftoverSelfBind(dir: string): Promise<boolean> {
  const { stdout } = await runCommand("findmnt", [
    "-n",
    "-o",
    "TARGET,FSROOT,OPTIONS",
    "--mountpoint",
    dir,
  ]).catch(() => ({ stdout: "" }));
  const top = stdout.trim().split("\n").at(-1)?.trim().split(/\s+/) ?? [];
  const [target, fsroot, options = ""] = top;
  const flags = new Set(options.split(","));
  if (target !== dir || fsroot === undefined || fsroot === "/") return false;
  return dir.endsWith(fsroot) && flags.has("nosuid") && flags.has("nodev");
}

/** True when the mount that holds `dir` (the top one, where several are stacked) has both nosuid and nodev. */
async function hasNosuidNodev(dir: string): Promise<boolean> {
  const { stdout } = await runCommand("findmnt", ["-n", "-o", "OPTIONS", "-T", dir]).catch(() => ({
    stdout: "",
  }));
  const top = stdout.trim().split("\n").at(-1) ?? "";
  const options = new Set(top.split(","));
  return options.has("nosuid") && options.has("nodev");
}

function stderrOf(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(err)).split("\n")[0] ?? "";
}
