import { closeSync, constants, mkdirSync, openSync, readlinkSync, realpathSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "./errors.ts";
import { pathError } from "./files/path-error.ts";

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;

/**
 * Where every jailed command sees its workspace, whatever the host's folder is (decision
 * 243). The file tools take paths under it as well as paths relative to the root.
 */
export const WORKSPACE_PATH = "/workspace";

/**
 * The directory tree commands and file tools may touch. Every path a caller names is
 * relative to the root, or absolute under `/workspace` (where jailed commands see the
 * root); `..` that climbs out, other absolute paths, NUL bytes and symlinks that resolve
 * outside the root are refused.
 */
export class Workspace {
  /** Real (symlink-free) absolute path of the root. */
  readonly root: string;

  /**
   * Creates the root if it is missing.
   * @example const ws = new Workspace("./workspace");
   */
  constructor(root: string) {
    mkdirSync(root, { recursive: true });
    this.root = realpathSync(root);
  }

  /**
   * Absolute path for `rel`, checked lexically and, for what exists, through symlinks.
   * A missing final component is allowed (the caller reports "not found" itself).
   * @example await ws.resolve("src/index.ts") // "/abs/workspace/src/index.ts"
   */
  async resolve(rel: string | undefined): Promise<string> {
    const candidate = this.#lexical(rel);
    let real: string;
    try {
      real = await realpathOfExisting(candidate);
    } catch (err) {
      throw pathError(err, rel ?? "");
    }
    if (!this.contains(real)) {
      throw new SandboxError(
        "forbidden",
        `path '${rel}' resolves (through a symlink) outside the workspace root; name a path inside it`,
      );
    }
    return candidate;
  }

  /**
   * Creates directory `abs` and its missing parents one level at a time, each made
   * relative to the folder above it as opened and checked, never through a name checked
   * before: the walk holds each level's descriptor (O_DIRECTORY), makes the next name
   * in it through `/proc/self/fd/<fd>/<name>` (Node has no `mkdirat`), opens that, and
   * checks the opened folder's real path lies inside the root. A folder swapped for a
   * symlink meanwhile is followed only to be refused, and nothing is made under it
   * (decision 241). Returns the real path of `abs`.
   * @example ws.makeDirectorySync(path.join(ws.root, "src/lib")) // "/abs/workspace/src/lib"
   */
  makeDirectorySync(abs: string): string {
    if (!this.contains(abs)) {
      throw new SandboxError("forbidden", "that path is not inside the workspace root");
    }
    let fd = openSync(this.root, DIRECTORY_FLAGS | constants.O_NOFOLLOW);
    try {
      let walked = "";
      for (const part of this.relative(abs).split("/").filter(Boolean)) {
        walked = walked ? `${walked}/${part}` : part;
        const next = `/proc/self/fd/${fd}/${part}`;
        try {
          mkdirSync(next);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        }
        const child = openSync(next, DIRECTORY_FLAGS);
        closeSync(fd);
        fd = child;
        if (!this.contains(readlinkSync(`/proc/self/fd/${fd}`))) {
          throw new SandboxError(
            "forbidden",
            `'${walked}' resolves (through a symlink) outside the workspace root`,
          );
        }
      }
      return readlinkSync(`/proc/self/fd/${fd}`);
    } finally {
      closeSync(fd);
    }
  }

  /** Path relative to the root, with forward slashes ("" for the root itself). */
  relative(abs: string): string {
    return path.relative(this.root, abs).split(path.sep).join("/");
  }

  /** True when `abs` is the root or lies under it. */
  contains(abs: string): boolean {
    return abs === this.root || abs.startsWith(this.root + path.sep);
  }

  #lexical(rel: string | undefined): string {
    if (rel === undefined || rel === "" || rel === ".") return this.root;
    if (rel.includes("\0")) {
      throw new SandboxError("bad_request", "path contains a NUL byte");
    }
    let inside = rel;
    if (rel === WORKSPACE_PATH || rel.startsWith(`${WORKSPACE_PATH}/`)) {
      inside = rel.slice(WORKSPACE_PATH.length + 1) || ".";
    } else if (path.isAbsolute(rel)) {
      throw new SandboxError(
        "bad_request",
        `path '${rel}' is absolute outside ${WORKSPACE_PATH}; name a path relative to the workspace root or under ${WORKSPACE_PATH}`,
      );
    }
    const abs = path.resolve(this.root, inside);
    if (!this.contains(abs)) {
      throw new SandboxError(
        "forbidden",
        `path '${rel}' escapes the workspace root; name a path inside it`,
      );
    }
    return abs;
  }
}

/** realpath of `p`, or of its deepest existing ancestor joined with the missing rest. */
async function realpathOfExisting(p: string): Promise<string> {
  const missing: string[] = [];
  let current = p;
  for (;;) {
    try {
      await lstat(current);
      const real = await realpath(current);
      return missing.length === 0 ? real : path.join(real, ...missing.reverse());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      const parent = path.dirname(current);
      if (parent === current) return p;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}
