/**
 * The record a created sandbox leaves beside its disk, `<dir>/<id>.json` (decision 246):
 * what a host that starts again needs to reopen it (its limits, its disk's mode, its
 * network policy, when it was made). Written whole (a temp file renamed over it), so a
 * host killed mid-write leaves the old record or the new one, never half of one.
 */
import { readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxLimits } from "../../src/protocol/index.ts";
import type { NetworkPolicy } from "../../src/protocol/network-policy.ts";
import type { DiskMode } from "./config.ts";

export interface SandboxRecord {
  id: string;
  /** ISO time it was created. */
  createdAt: string;
  limits: SandboxLimits;
  disk: DiskMode;
  policy: NetworkPolicy;
  /**
   * 2 when its disk is in its folder (`<id>/disk`, decision 257); absent for a sandbox
   * an older host made, whose disk is its folder itself.
   */
  layout?: 2;
}

const SUFFIX = ".json";

/** Where sandbox `id`'s record lives under `dir`. */
function recordPath(dir: string, id: string): string {
  return path.join(dir, `${id}${SUFFIX}`);
}

/**
 * Writes `record` atomically.
 * @example await writeRecord("/srv/sandboxes", { id, createdAt, limits, disk: "loop", policy });
 */
export async function writeRecord(dir: string, record: SandboxRecord): Promise<void> {
  const file = recordPath(dir, record.id);
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export async function removeRecord(dir: string, id: string): Promise<void> {
  await rm(recordPath(dir, id), { force: true });
}

/** A record that could not be read: its id and why. */
interface UnreadableRecord {
  id: string;
  reason: string;
}

/**
 * Every record under `dir` whose name `isId` accepts, and those that could not be read
 * (a leftover temp file is not a record: the rename never happened).
 */
export async function readRecords(
  dir: string,
  isId: (id: string) => boolean,
): Promise<{ records: SandboxRecord[]; unreadable: UnreadableRecord[] }> {
  const records: SandboxRecord[] = [];
  const unreadable: UnreadableRecord[] = [];
  for (const name of await readdir(dir)) {
    if (name.endsWith(`${SUFFIX}.tmp`)) await rm(path.join(dir, name), { force: true });
    if (!name.endsWith(SUFFIX)) continue;
    const id = name.slice(0, -SUFFIX.length);
    if (!isId(id)) continue;
    try {
      const record = JSON.parse(await readFile(path.join(dir, name), "utf8")) as SandboxRecord;
      if (record.id !== id || typeof record.createdAt !== "string" || !record.limits) {
        throw new Error("it is not a sandbox record");
      }
      records.push(record);
    } catch (err) {
      unreadable.push({ id, reason: `its record could not be read (${(err as Error).message})` });
    }
  }
  return { records, unreadable };
}
