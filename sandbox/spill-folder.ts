/**
 * Where spill files live: a folder of the host that no jailed command can write
 * (decision 160). The host holds the folder open (O_DIRECTORY|O_NOFOLLOW) for its whole
 * life and creates and opens every file relative to that descriptor, through
 * `/proc/self/fd/<dir>/<name>` (Node has no `openat`): the kernel resolves the name in
 * the opened folder itself, whatever has been renamed or planted since. Each opened file
 * is then checked through its own descriptor: a regular file with one name, in this
 * folder.
 *
 * Jails see the folder read-only at `SPILL_JAIL_PATH` (`/toolwire/spill`), in the jail's
 * own root, outside the workspace; that is also the path published as `spillPath` and
 * the one the `read` and `grep` tools accept. No message names the host's folder.
 */
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
  unlinkSync,
} from "node:fs";
import { type FileHandle, open, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "./errors.ts";

/** The spill folder's path inside every jail, and the prefix the file tools map to it. */
export const SPILL_JAIL_PATH = "/toolwire/spill";

/** A spill file's name: an exec id and `.log`. */
const SPILL_NAME = /^[A-Za-z0-9_-]{1,128}\.log$/;

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Created here and nowhere else: O_EXCL, so a name that exists is never written through. */
const CREATE_FLAGS =
  constants.O_WRONLY |
  constants.O_APPEND |
  constants.O_CREAT |
  constants.O_EXCL |
  constants.O_NOFOLLOW |
  constants.O_NONBLOCK;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The spill file is missing, or what has its name is not one of the host's spill files. */
class SpillMissingError extends SandboxError {
  constructor(jailPath: string) {
    super(
      "not_found",
      `no spill file ${jailPath} on this sandbox (the output fit in its window, or the file was removed)`,
    );
  }
}

/**
 * One folder of spill files, held open.
 * @example const spills = new SpillFolder("/var/lib/toolwire/spill", workspace.root);
 */
export class SpillFolder {
  /** Real path of the folder on the host (never shown to a caller). */
  readonly hostPath: string;
  readonly #dirFd: number;

  /**
   * Creates the folder if missing (mode 0700) and opens it. Refuses a folder inside the
   * workspace or one that holds it: the jail would see the folder writable.
   */
  constructor(folder: string, workspaceRoot: string) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const real = realpathSync(folder);
    const root = realpathSync(workspaceRoot);
    if (within(real, root) || within(root, real)) {
      throw new Error(
        `SANDBOX_SPILL_DIR '${folder}' must lie outside the workspace '${workspaceRoot}' (and not contain it): commands can write the workspace`,
      );
    }
    this.#dirFd = openSync(real, DIR_FLAGS);
    this.hostPath = readlinkSync(`/proc/self/fd/${this.#dirFd}`);
  }

  /**
   * The path published for exec `execId`'s spill file, as the jail and the file tools
   * name it.
   * @example spills.jailPath("call-1") // "/toolwire/spill/call-1.log"
   */
  jailPath(execId: string): string {
    return `${SPILL_JAIL_PATH}/${execId}.log`;
  }

  /**
   * The file name a tool path names: `/toolwire/spill/<name>` gives `<name>`,
   * `/toolwire/spill` itself gives "" (the folder), anything else null (not a spill path).
   * @example SpillFolder.nameOf("/toolwire/spill/a.log") // "a.log"
   */
  static nameOf(toolPath: string | undefined): string | null {
    if (toolPath === undefined) return null;
    const trimmed = toolPath.replace(/\/+$/, "");
    if (trimmed === SPILL_JAIL_PATH) return "";
    if (!trimmed.startsWith(`${SPILL_JAIL_PATH}/`)) return null;
    return trimmed.slice(SPILL_JAIL_PATH.length + 1);
  }

  /** Host path of file `name` in the folder (compared with what a descriptor names). */
  hostFile(name: string): string {
    return path.join(this.hostPath, name);
  }

  /** True when `abs` (a real host path) is the folder or a file directly in it. */
  contains(abs: string): boolean {
    return abs === this.hostPath || path.dirname(abs) === this.hostPath;
  }

  /**
   * Creates exec `execId`'s spill file, replacing one left by an earlier exec of the
   * same id, and returns its write descriptor (appending).
   */
  create(execId: string): number {
    const name = `${execId}.log`;
    const at = this.#at(name);
    let fd: number;
    try {
      fd = openSync(at, CREATE_FLAGS, 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      unlinkSync(at);
      fd = openSync(at, CREATE_FLAGS, 0o644);
    }
    try {
      this.#check(fd, name, fstatSync(fd));
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return fd;
  }

  /**
   * Opens spill file `name` (`<execId>.log`) for reading, or throws a 404 that names
   * only its jail path.
   */
  async openRead(name: string): Promise<FileHandle> {
    const jailPath = `${SPILL_JAIL_PATH}/${name}`;
    if (!SPILL_NAME.test(name)) throw new SpillMissingError(jailPath);
    let file: FileHandle;
    try {
      file = await open(this.#at(name), READ_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ELOOP" || code === "ENXIO") {
        throw new SpillMissingError(jailPath);
      }
      throw err;
    }
    try {
      const real = await readlink(`/proc/self/fd/${file.fd}`);
      if (real !== this.hostFile(name)) throw new SpillMissingError(jailPath);
      this.#check(file.fd, name, await file.stat());
    } catch (err) {
      await file.close();
      if (err instanceof SandboxError) throw err;
      throw new SpillMissingError(jailPath);
    }
    return file;
  }

  /** Removes exec `execId`'s file, if its name still names the file `ours` describes. */
  remove(execId: string, ours: Stats): void {
    const at = this.#at(`${execId}.log`);
    let fd: number;
    try {
      fd = openSync(at, READ_FLAGS);
    } catch {
      return;
    }
    try {
      const now = fstatSync(fd);
      if (now.ino === ours.ino && now.dev === ours.dev) unlinkSync(at);
    } finally {
      closeSync(fd);
    }
  }

  /** Names of the spill files, sorted. */
  async names(): Promise<string[]> {
    const names = await readdir(this.#at(""));
    return names.filter((n) => SPILL_NAME.test(n)).sort();
  }

  /** Closes the folder's descriptor (host shutdown). */
  close(): void {
    try {
      closeSync(this.#dirFd);
    } catch {}
  }

  /** The name, resolved in the folder the host holds open. */
  #at(name: string): string {
    return `/proc/self/fd/${this.#dirFd}/${name}`;
  }

  #check(fd: number, name: string, stat: Stats): void {
    const where = readlinkSync(`/proc/self/fd/${fd}`);
    if (!stat.isFile() || stat.nlink !== 1 || where !== this.hostFile(name)) {
      throw new SpillMissingError(`${SPILL_JAIL_PATH}/${name}`);
    }
  }
}

function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer + path.sep);
}
