// A directory of more names than one window (sorted-entries.ts, ENTRY_WINDOW) is listed
// a window at a time (issue 30: `ls` and the walker held every name of a directory in
// memory at once). Across the window's edge nothing is lost, repeated or out of order,
// for `ls` and for `find` (the walker), just under, at and just over the window; `ls`
// (which keeps only its `limit`) cuts a case-insensitive tie ("A" and "a") one way.
import { writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTRY_WINDOW } from "../../../../sandbox/files/sorted-entries.ts";
import { startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
const name = (i: number) => `f${String(i).padStart(6, "0")}`;

beforeAll(async () => {
  host = await startTestHost();
  await mkdir(path.join(host.root, "big"));
  for (let i = 0; i < ENTRY_WINDOW - 1; i++)
    writeFileSync(path.join(host.root, "big", name(i)), "");
});
afterAll(() => host.close());

async function everyName(): Promise<{ ls: string[]; lsTotal: number; find: string[] }> {
  const ls = await host.client.ls({ path: "big", limit: 100_000 });
  const find = await host.client.find({ pattern: "*", path: "big", limit: 100_000 });
  return { ls: ls.entries, lsTotal: ls.total, find: find.paths };
}

describe("a directory larger than one window", () => {
  it.each([
    ["just under the window", ENTRY_WINDOW - 1],
    ["at the window", ENTRY_WINDOW],
    ["just over the window", ENTRY_WINDOW + 1],
  ])("%s: ls and find give every name once, in order", { timeout: 60_000 }, async (_, count) => {
    for (let i = ENTRY_WINDOW - 1; i < count; i++) {
      writeFileSync(path.join(host.root, "big", name(i)), "");
    }
    const expected = Array.from({ length: count }, (_, i) => name(i));
    const got = await everyName();
    expect(got.lsTotal).toBe(count);
    expect(got.ls).toEqual(expected);
    expect(got.find).toEqual(expected);
    // The first names and the last, as a limit cuts them.
    const first = await host.client.ls({ path: "big", limit: 3 });
    expect(first).toEqual({ path: "big", entries: expected.slice(0, 3), total: count });
    const last = await host.client.find({ pattern: "f0655*", path: "big" });
    expect(last.paths).toEqual(expected.filter((n) => n.startsWith("f0655")));
  });

  it("ls cuts names that tie case-insensitively in one order: the bytes of the name decide", async () => {
    await mkdir(path.join(host.root, "ties"));
    for (const n of ["b", "a", "B", "A"]) writeFileSync(path.join(host.root, "ties", n), "");
    for (const [limit, entries] of [
      [1, ["A"]],
      [2, ["A", "a"]],
      [3, ["A", "a", "B"]],
    ] as const) {
      expect(await host.client.ls({ path: "ties", limit })).toEqual({
        path: "ties",
        entries,
        total: 4,
      });
    }
  });
});
