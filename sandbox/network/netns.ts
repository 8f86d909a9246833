import { rm, writeFile } from "node:fs/promises";
import { runCommand, unmount } from "../host-command.ts";

/** Where a sandbox's commands run: the namespace they enter, and how it is let go. */
export interface SandboxNamespace {
  /** The argv prefix that runs a command inside the namespace. */
  enter(): string[];
  remove(): Promise<void>;
}

/**
 * One sandbox's network namespace (decision 180): only loopback, up; held by a bind
 * mount of its nsfs file on `file`, so it outlives every process in it. Commands enter
 * it with `nsenter --net=<file>` before bubblewrap starts. Making one needs root (the
 * mount); `remove` unmounts it and the kernel frees it once no process is left in it.
 */
export class NetworkNamespace implements SandboxNamespace {
  readonly file: string;

  private constructor(file: string) {
    this.file = file;
  }

  /**
   * Makes a fresh namespace held at `file`, with loopback up; one a host that stopped
   * left there (a sandbox reopened after a restart) is let go first.
   * @example const ns = await NetworkNamespace.create("/srv/sandboxes/sbx_…/net/ns");
   */
  static async create(file: string): Promise<NetworkNamespace> {
    const ns = new NetworkNamespace(file);
    await ns.remove();
    await writeFile(file, "", { flag: "wx" });
    try {
      await runCommand("unshare", [`--net=${file}`, "ip", "link", "set", "lo", "up"]);
      return ns;
    } catch (err) {
      await ns.remove();
      const why = ((err as { stderr?: string }).stderr ?? String(err)).trim().split("\n")[0];
      throw new Error(
        `could not make the sandbox's network namespace (${why}); the host needs root, 'unshare' and 'ip' (Debian: util-linux, iproute2)`,
      );
    }
  }

  /** The argv prefix that runs a command inside the namespace. */
  enter(): string[] {
    return ["nsenter", `--net=${this.file}`, "--"];
  }

  /** Unmounts the file (when mounted) and deletes it. */
  async remove(): Promise<void> {
    await unmount(this.file);
    await rm(this.file, { force: true });
  }
}
