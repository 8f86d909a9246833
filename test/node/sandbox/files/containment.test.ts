// read/grep/glob/cwd stay inside the workspace without races, and path errors are
// clear 400s that name no host path. Real host, real jailed commands doing the swapping.
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxHttpError } from "../../../../src/execenv/index.ts";
import { applyUpdate, execId, type Folded, startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
let outside: string;
beforeAll(async () => {
  host = await startTestHost();
  outside = mkdtempSync(path.join(tmpdir(), "toolwire-outside-"));
  writeFileSync(path.join(outside, "secret.txt"), "SECRET outside the workspace\n");
});
afterAll(async () => {
  await host.close();
  rmSync(outside, { recursive: true, force: true });
});

/** Starts a jailed command and resolves once it printed "ready"; returns its id. */
async function startSwapper(command: string): Promise<string> {
  const id = execId("swap");
  const f: Folded = { updates: [], text: "", metadata: null, exit: null };
  for await (const u of host.client.exec({ execId: id, command, timeoutSec: 120 })) {
    applyUpdate(f, u);
    if (f.text.includes("ready")) break;
  }
  return id;
}

/** What the caller gets: the JSON answer, or "<status> <the host's message>". */
async function outcome(attempt: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await attempt());
  } catch (err) {
    if (!(err instanceof SandboxHttpError)) throw err;
    return `${err.status} ${err.message.replace(/^sandbox refused the request \(\d+ \w+\): /, "")}`;
  }
}

describe("containment: no race through a swapped symlink", () => {
  it("1,000 reads of a symlink a command keeps swapping never return the file outside", async () => {
    const swapper = await startSwapper(
      `echo inside > in.txt; echo ready; while :; do ln -sfn in.txt l1 && mv -T l1 link; ln -sfn ${outside}/secret.txt l2 && mv -T l2 link; done`,
    );
    const results: string[] = [];
    for (let batch = 0; batch < 100; batch++) {
      const reads = Array.from({ length: 10 }, () =>
        outcome(() => host.client.read({ path: "link" })),
      );
      results.push(...(await Promise.all(reads)));
    }
    await host.client.kill(swapper);
    expect(results).toHaveLength(1000);
    expect(results.filter((r) => r.includes("SECRET"))).toEqual([]);
    const inside = results.filter((r) => r.includes('"lines":["inside"]')).length;
    const refused = results.filter((r) =>
      r.startsWith("403 path 'link' resolves (through a symlink) outside the workspace root"),
    ).length;
    // Both sides of the race were hit, and nothing else came back.
    expect(inside).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(inside + refused).toBe(1000);
  }, 60_000);

  it("grep with the walker over a directory a command keeps swapping never searches outside", async () => {
    mkdirSync(path.join(host.root, "tree", "real"), { recursive: true });
    writeFileSync(path.join(host.root, "tree", "real", "a.txt"), "SECRET-looking but inside\n");
    const swapper = await startSwapper(
      `cd tree; echo ready; while :; do ln -sfn real d1 && mv -T d1 dir; ln -sfn ${outside} d2 && mv -T d2 dir; done`,
    );
    const results: string[] = [];
    for (let i = 0; i < 200; i++) {
      results.push(
        await outcome(() =>
          host.client.grep({ pattern: "outside the workspace", path: "tree/dir" }),
        ),
      );
    }
    await host.client.kill(swapper);
    expect(results.filter((r) => r.includes("SECRET outside"))).toEqual([]);
  }, 60_000);
});

describe("containment: hard links and odd paths", () => {
  it("a hard link planted in the workspace to a file outside is refused", async () => {
    // The workspace is a mount of its own (decision 240), so a name outside cannot be
    // linked in at all; a file with two names is refused whatever the other name is.
    expect(() =>
      linkSync(path.join(outside, "secret.txt"), path.join(host.root, "hard.txt")),
    ).toThrow(/EXDEV/);
    writeFileSync(path.join(host.root, "other-name.txt"), "SECRET outside\n");
    linkSync(path.join(host.root, "other-name.txt"), path.join(host.root, "hard.txt"));
    const got = await outcome(() => host.client.read({ path: "hard.txt" }));
    expect(got).toBe(
      "403 'hard.txt' is a hard link (2 names), and another name may lie outside the workspace; the host reads only files with one name (cat it with bash, which runs in the jail)",
    );
    const grep = await outcome(() => host.client.grep({ pattern: "SECRET" }));
    expect(grep).not.toContain("SECRET outside");
  });

  it("a 300-byte path component is a 400 that names no host path, for read, grep, glob and cwd", async () => {
    const long = "a".repeat(300);
    const message = `path '${long.slice(0, 117)}...' is too long: each name may have at most 255 bytes, the whole path 4096`;
    for (const attempt of [
      () => host.client.read({ path: long }),
      () => host.client.read({ path: `${long}/x.txt` }),
      () => host.client.grep({ pattern: "x", path: long }),
      () => host.client.glob({ pattern: "*", path: long }),
      () => host.client.exec({ execId: execId(), command: "pwd", cwd: long }).next(),
    ]) {
      const got = await outcome(attempt);
      expect(got).toBe(`400 ${message}`);
      expect(got).not.toContain(host.root);
    }
  });

  it("a path through a file is a clear 400; a FIFO is refused without blocking", async () => {
    writeFileSync(path.join(host.root, "plain.txt"), "x\n");
    expect(await outcome(() => host.client.read({ path: "plain.txt/inner" }))).toBe(
      "400 path 'plain.txt/inner' goes through something that is not a directory",
    );
    await fold1(`mkfifo pipe`);
    expect(await outcome(() => host.client.read({ path: "pipe" }))).toBe(
      "400 'pipe' is not a regular file",
    );
  });
});

async function fold1(command: string): Promise<void> {
  for await (const _ of host.client.exec({ execId: execId(), command })) {
    /* read to the exit */
  }
}
