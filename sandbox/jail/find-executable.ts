import { accessSync, constants } from "node:fs";
import path from "node:path";

/**
 * Absolute path of executable `name` on PATH, or null.
 * @example findExecutable("bwrap") // "/usr/bin/bwrap"
 */
export function findExecutable(name: string, pathEnv = process.env.PATH ?? ""): string | null {
  for (const dir of pathEnv.split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}
