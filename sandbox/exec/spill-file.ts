import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import type { SpillFolder } from "../spill-folder.ts";

/**
 * The complete raw output of one exec, on disk: the copier thread (copier-thread.ts)
 * appends the command's output pipe to it through the descriptor `open` returns
 * (O_APPEND). The host follows the file through a second descriptor (`read`) to keep
 * the window and the totals, and removes the file at the end when the output fit the
 * window (decisions 084, 086).
 *
 * The file lives in the host's spill folder (spill-folder.ts, decision 160), which jails
 * see read-only: no command can write, append to, rename or replace it, so the host's
 * descriptors and the name hold the same bytes.
 */
export class SpillFile {
  readonly #folder: SpillFolder;
  readonly #execId: string;
  #writeFd: number | null = null;
  #readFd: number | null = null;

  /** @example const spill = new SpillFile(spills, "call-1"); const fd = spill.open(); */
  constructor(folder: SpillFolder, execId: string) {
    this.#folder = folder;
    this.#execId = execId;
  }

  /** Creates the file (replacing an earlier exec's of the same id) and returns the descriptor the command's output is copied to. */
  open(): number {
    const fd = this.#folder.create(this.#execId);
    this.#writeFd = fd;
    this.#readFd = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY);
    return fd;
  }

  /** Reads into `buffer` from `position`; 0 at the current end of the file. */
  read(buffer: Uint8Array, position: number): number {
    if (this.#readFd === null) return 0;
    return readSync(this.#readFd, buffer, 0, buffer.length, position);
  }

  /** Closes the host's descriptors; with `keep` false, removes the file. */
  close(keep: boolean): void {
    // The write descriptor is the copier's until now: it ended before the exec does.
    if (this.#writeFd !== null) closeSync(this.#writeFd);
    this.#writeFd = null;
    const fd = this.#readFd;
    if (fd === null) return;
    const ours: Stats = fstatSync(fd);
    closeSync(fd);
    this.#readFd = null;
    if (!keep) this.#folder.remove(this.#execId, ours);
  }
}
