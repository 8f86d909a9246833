/**
 * The host's own short commands (`mount`, `umount`, `mkfs.ext4`, `unshare`, `findmnt`):
 * run by the spawner where there is one (decision 277), else by Node.
 *
 * Node starts a child with `fork`, on the event loop, which copies the page tables of
 * the whole host (decision 259). The pools that make disks and networks ahead run four
 * of these per create, and a delete two, so on a small host every create stalled the
 * event loop for tens of milliseconds while the next sandbox's first command waited.
 * The spawner starts them with `posix_spawn`, beside the host.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { sharedSpawner } from "./exec/spawner.ts";

const execFileAsync = promisify(execFile);

/** What a command printed, as `execFile` answers it. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

/** A command that could not start or did not exit 0; `stderr` says why, as `execFile`'s error. */
export class CommandFailed extends Error {
  readonly stdout: string;
  readonly stderr: string;

  constructor(message: string, output: CommandOutput) {
    super(message);
    this.name = "CommandFailed";
    this.stdout = output.stdout;
    this.stderr = output.stderr;
  }
}

/**
 * Runs `file` (a name looked for on PATH, or a path) with `args`; resolves with what it
 * printed when it exits 0, else rejects with a `CommandFailed` carrying its output.
 * @example const { stdout } = await runCommand("findmnt", ["-rn", "-o", "TARGET"]);
 */
export async function runCommand(file: string, args: string[]): Promise<CommandOutput> {
  const byHost = () => execFileAsync(file, args, { encoding: "utf8" });
  const spawner = sharedSpawner();
  if (!spawner) return byHost();
  const command = [file, ...args].join(" ");
  let ended: Awaited<ReturnType<typeof spawner.run>>;
  try {
    ended = await spawner.run(file, args);
  } catch (err) {
    // A spawner that ended meanwhile (a host stopping): the host runs it itself.
    if (!spawner.alive) return byHost();
    const why = err instanceof Error ? err.message : String(err);
    throw new CommandFailed(`could not start ${command}: ${why}`, { stdout: "", stderr: why });
  }
  const { code, signal, stdout, stderr } = ended;
  if (code === 0) return { stdout, stderr };
  const how = signal ? `was ended by ${signal}` : `exited ${code ?? "(unknown)"}`;
  throw new CommandFailed(`${command} ${how}\n${stderr}`, { stdout, stderr });
}

/**
 * Unmounts `target`, lazily when something still holds a file open there; never throws
 * (a target that is not mounted, or is gone already, is left as it is).
 * @example await unmount("/srv/sandboxes/sbx_…/disk");
 */
export async function unmount(target: string): Promise<void> {
  await runCommand("umount", [target])
    .catch(() => runCommand("umount", ["-l", target]))
    .catch(() => {});
}
