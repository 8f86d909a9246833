// No file's shape can crash the host or grow its memory (issue 30, decision 244): a
// real host process reads 30 MB files that are one line (no newline, NUL bytes, invalid
// UTF-8) and a 256 MiB one-line spill through every file tool, and its peak RSS stays
// within HOST_RSS_BOUND of what it was before.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GREP_MAX_LINE_CHARS } from "../../../../sandbox/files/grep-blocks.ts";
import { findRipgrep } from "../../../../sandbox/files/ripgrep.ts";
import { SandboxClient } from "../../../../src/execenv/index.ts";
import { READ_LINE_CHARS } from "../../../../src/protocol/index.ts";
import {
  freePort,
  HOST,
  type Started,
  startNode,
  stopGroup,
  waitUntilUp,
} from "../../../support/processes.ts";

if (!findRipgrep()) throw new Error("these tests need ripgrep ('rg') on PATH");

const MiB = 1024 * 1024;
/** How far the host's peak RSS may rise over the whole run (docs/sandbox-security.md). */
const HOST_RSS_BOUND = 64 * MiB;
const FILE_BYTES = 30 * MiB;
/** Big enough that a host holding one line, or its JSON, would pass the bound many times over. */
const SPILL_BYTES = 256 * MiB;
const SPILL_NAME = "long-line.log";

/** Peak resident set of process `pid` so far (VmHWM). */
function peakRss(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

/**
 * `bytes` of `unit` repeated, written in 1 MiB pieces (the test's own memory stays small),
 * each piece's last byte `last` when given.
 */
async function writeRepeated(
  file: string,
  unit: Buffer,
  bytes: number,
  tail = "",
  last?: number,
): Promise<void> {
  const piece = Buffer.alloc(MiB, unit);
  if (last !== undefined) piece[MiB - 1] = last;
  const handle = await open(file, "w");
  for (let left = bytes; left > 0; left -= MiB) await handle.write(piece, 0, Math.min(MiB, left));
  if (tail) await handle.write(tail);
  await handle.close();
}

/** A real host process over a fresh root, `env` on top of the defaults. */
async function startHost(env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-long-lines-"));
  const token = randomBytes(24).toString("hex");
  const port = await freePort();
  const host = startNode(["sandbox/main.ts"], {
    SANDBOX_TOKEN: token,
    HOST,
    PORT: String(port),
    SANDBOX_ROOT: path.join(dir, "ws"),
    SANDBOX_SEARCH: "ripgrep",
    SANDBOX_SPILL_DIR: path.join(dir, "spill"),
    SANDBOXES_DIR: path.join(dir, "sandboxes"),
    SANDBOX_DISK: "none",
    ...env,
  });
  await waitUntilUp(`http://${HOST}:${port}/healthz`, host);
  return {
    started: host,
    dir,
    root: path.join(dir, "ws"),
    client: new SandboxClient(`http://${HOST}:${port}`, token),
    async close() {
      await stopGroup(host.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let host: Awaited<ReturnType<typeof startHost>>;
let started: Started;
let client: SandboxClient;
let before: number;

beforeAll(async () => {
  host = await startHost();
  ({ started, client } = host);
  const { root, dir } = host;
  await writeRepeated(path.join(root, "one-line.txt"), Buffer.from("a"), FILE_BYTES, "\n");
  await writeRepeated(path.join(root, "no-newline.txt"), Buffer.from("a"), FILE_BYTES);
  await writeRepeated(path.join(root, "invalid-utf8.txt"), Buffer.from([0x61, 0xff]), FILE_BYTES);
  // A NUL byte ending each MiB, none in the first 8 KiB: read takes it for text, and grep
  // searches it as text when it is named (in a folder ripgrep skips it as binary).
  await writeRepeated(path.join(root, "nul.txt"), Buffer.from("a"), FILE_BYTES, "", 0);
  writeFileSync(path.join(root, "small.txt"), "a small file\n");
  await writeRepeated(path.join(dir, "spill", SPILL_NAME), Buffer.from("a"), SPILL_BYTES);
  // Warm up every route once, so the baseline holds the host's own working set.
  await client.grep({ pattern: "small", path: "small.txt" });
  await client.read({ path: "small.txt" });
  await client.ls({ path: "." });
  before = peakRss(started.child.pid!);
}, 120_000);

afterAll(() => host.close());
const shapes = ["one-line.txt", "no-newline.txt", "invalid-utf8.txt", "nul.txt"];

describe("a 30 MB file that is one line", () => {
  it.each(shapes)("grep answers %s's matching line with its number, cut", async (file) => {
    const r = await client.grep({ pattern: "a", path: file });
    expect(r.matches).toHaveLength(1);
    const [m] = r.matches;
    expect(m).toMatchObject({ path: file, line: 1 });
    expect(m!.text.endsWith("…")).toBe(true);
    expect(m!.text.length).toBe(GREP_MAX_LINE_CHARS + 1);
    expect(r.cutLines).toBe(1);
  });

  it("grep for the line's end finds it too (it matches at its last byte)", async () => {
    const r = await client.grep({ pattern: "a$", path: "one-line.txt" });
    expect(r.matches.map((m) => m.line)).toEqual([1]);
  });

  it("grep over the whole workspace lists each long text file once (binary ones skipped)", async () => {
    const r = await client.grep({ pattern: "a" });
    expect(r.matches.map((m) => `${m.path}:${m.line}`)).toEqual([
      "invalid-utf8.txt:1",
      "no-newline.txt:1",
      "one-line.txt:1",
      "small.txt:1",
    ]);
  });

  it.each(shapes)("read shows %s's one line cut to the preview cap", async (file) => {
    const r = await client.read({ path: file });
    expect(r).toMatchObject({ totalLines: 1, cutLines: 1, startLine: 1 });
    expect(r.lines[0]!.length).toBeLessThanOrEqual(READ_LINE_CHARS);
  });

  it("find, glob and ls list the files without reading them", async () => {
    expect((await client.find({ pattern: "*.txt" })).paths).toHaveLength(5);
    expect((await client.glob({ pattern: "*.txt" })).paths).toHaveLength(5);
    expect((await client.ls({ path: "." })).entries).toHaveLength(5);
  });

  it("edit refuses a file over the write cap before reading it", async () => {
    await expect(
      client.edit({ path: "one-line.txt", edits: [{ oldText: "aaa", newText: "b" }] }),
    ).rejects.toMatchObject({ status: 413, message: expect.stringMatching(/one-line\.txt/) });
  });
});

describe("a 256 MiB spill that is one line", () => {
  const spill = `/toolwire/spill/${SPILL_NAME}`;

  it("grep of the spill and of the spill folder answers line 1, cut", async () => {
    for (const where of [spill, "/toolwire/spill"]) {
      const r = await client.grep({ pattern: "a$", path: where });
      expect(r.matches).toHaveLength(1);
      expect(r.matches[0]).toMatchObject({ path: spill, line: 1 });
      expect(r.cutLines).toBe(1);
    }
  }, 60_000);

  it("read (what job_output reads a spill with) shows its line cut", async () => {
    const r = await client.read({ path: spill });
    expect(r).toMatchObject({ totalLines: 1, cutLines: 1 });
  }, 60_000);
});

describe("the host process", () => {
  it("is alive, and its peak RSS rose by less than the bound", async () => {
    expect(started.child.exitCode).toBeNull();
    expect((await client.grep({ pattern: "small", path: "small.txt" })).matches).toHaveLength(1);
    const rise = peakRss(started.child.pid!) - before;
    console.log(
      `host peak RSS ${(before / MiB).toFixed(0)} MiB, rose by ${(rise / MiB).toFixed(1)} MiB`,
    );
    expect(rise).toBeLessThan(HOST_RSS_BOUND);
  });
});

describe("a line larger than ripgrep's memory limit", () => {
  it("is a clear error, never 'no matches'", async () => {
    const small = await startHost({ SANDBOX_MAX_MEMORY_BYTES: String(64 * MiB) });
    try {
      await writeRepeated(path.join(small.root, "huge.txt"), Buffer.from("a"), 100 * MiB);
      await expect(small.client.grep({ pattern: "a$", path: "huge.txt" })).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(/ripgrep stopped .*out of memory/),
      });
    } finally {
      await small.close();
    }
  }, 60_000);
});
