// Per-command limits, each at, just under and just over, on a real jailed host.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_COMMAND_LIMITS, DEFAULT_MAX_SPILL_BYTES } from "../../../../sandbox/index.ts";
import {
  execId,
  fold,
  markedProcesses,
  spillOnHost,
  startTestHost,
  type TestHost,
} from "../harness.ts";

const MAX_PROCESSES = 8;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const MAX_SPILL_BYTES = 1024 * 1024;
const MAX_COMMAND_MEMORY_BYTES = 384 * 1024 * 1024;

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost({
    limits: {
      maxProcesses: MAX_PROCESSES,
      maxFileBytes: MAX_FILE_BYTES,
      maxMemoryBytes: MAX_MEMORY_BYTES,
      maxCommandMemoryBytes: MAX_COMMAND_MEMORY_BYTES,
    },
    maxSpillBytes: MAX_SPILL_BYTES,
  });
});
afterAll(() => host.close());

function run(command: string, extra: Record<string, unknown> = {}) {
  return fold(host.client.exec({ execId: execId(), command, ...extra }));
}

/** perl (one process) forks `n` children that sleep; says how many it started. */
function forks(n: number): string {
  return `perl -e 'my $n = 0; for (1..${n}) { my $p = fork(); if (!defined $p) { print "fork refused: $!\\n"; last } if ($p == 0) { sleep 5; exit } $n++ } print "started $n\\n"'`;
}

describe("limits: processes", () => {
  it("the defaults are documented: 256 processes, 1 GiB per file, 4 GiB of memory per process and per command, 1 GiB of output", () => {
    expect(DEFAULT_COMMAND_LIMITS).toEqual({
      maxProcesses: 256,
      maxFileBytes: 1024 ** 3,
      maxMemoryBytes: 4 * 1024 ** 3,
      maxCommandMemoryBytes: 4 * 1024 ** 3,
    });
    expect(DEFAULT_MAX_SPILL_BYTES).toBe(1024 ** 3);
  });

  it("at the limit every fork succeeds (the command itself counts as one)", async () => {
    const f = await run(forks(MAX_PROCESSES - 1));
    expect(f.text).toBe(`started ${MAX_PROCESSES - 1}\n`);
  });

  it("under the limit likewise", async () => {
    const f = await run(forks(MAX_PROCESSES - 2));
    expect(f.text).toBe(`started ${MAX_PROCESSES - 2}\n`);
  });

  it("one process over the limit: the fork is refused", async () => {
    const f = await run(forks(MAX_PROCESSES));
    expect(f.text).toBe(
      `fork refused: Resource temporarily unavailable\nstarted ${MAX_PROCESSES - 1}\n`,
    );
  });

  it("a fork bomb is contained: it never exceeds the limit, dies at its timeout, and the host keeps serving", async () => {
    const id = execId();
    const bomb = fold(
      host.client.exec({
        execId: id,
        command: "bomb() { bomb | bomb & }; bomb; sleep 30",
        env: { TOOLWIRE_MARK: id },
        timeoutSec: 2,
      }),
    );
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, markedProcesses(id).length);
    }, 20);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const meanwhile = await run("echo still serving");
    const f = await bomb;
    clearInterval(sampler);
    expect(meanwhile.text).toBe("still serving\n");
    expect(f.exit?.error).toMatch(/timed out after 2 s/);
    expect(f.text).toMatch(/fork: (retry: )?Resource temporarily unavailable/);
    // The command's processes plus the jail's two bwrap processes, which carry its env too.
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(MAX_PROCESSES + 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(markedProcesses(id)).toEqual([]);
  });
});

describe("limits: file size", () => {
  const write = (bytes: number) => `head -c ${bytes} /dev/zero > big; echo "exit $?"; wc -c < big`;

  it("a file of exactly the limit is written whole", async () => {
    const f = await run(write(MAX_FILE_BYTES));
    expect(f.text).toBe(`exit 0\n${MAX_FILE_BYTES}\n`);
  });

  it("just under the limit likewise", async () => {
    const f = await run(write(MAX_FILE_BYTES - 1));
    expect(f.text).toBe(`exit 0\n${MAX_FILE_BYTES - 1}\n`);
  });

  it("one byte over: the writer is stopped (SIGXFSZ) and the file holds the limit", async () => {
    const f = await run(write(MAX_FILE_BYTES + 1));
    expect(f.text).toMatch(/File size limit exceeded/);
    expect(f.text).toMatch(new RegExp(`exit 153\\n${MAX_FILE_BYTES}\\n$`));
    expect(statSync(path.join(host.root, "big")).size).toBe(MAX_FILE_BYTES);
  });

  it("the command's output is not a file it writes: past the file limit it is kept whole, up to the output cap", async () => {
    const small = await startTestHost({
      limits: { ...DEFAULT_COMMAND_LIMITS, maxFileBytes: 64 * 1024 },
    });
    try {
      const printed = await fold(
        small.client.exec({ execId: execId(), command: "head -c 200000 /dev/zero | tr '\\0' x" }),
      );
      expect(printed.exit).toEqual({ kind: "exit", exitCode: 0 });
      expect(printed.metadata).toMatchObject({ totalBytes: 200_000, truncated: true });
      const spill = readFileSync(spillOnHost(small, printed.metadata!.spillPath!));
      expect(spill.equals(Buffer.alloc(200_000, "x"))).toBe(true);
      const written = await fold(
        small.client.exec({
          execId: execId(),
          command: 'head -c 200000 /dev/zero > big; echo "exit $?"',
        }),
      );
      expect(written.text).toMatch(/exit 153\n$/);
    } finally {
      await small.close();
    }
  });
});

describe("limits: memory", () => {
  // RLIMIT_AS counts the whole address space (perl itself maps ~10 MiB), so the exact
  // byte is not meaningful: a quarter of the limit fits, the full limit cannot.
  const alloc = (bytes: number) => `perl -e '$x = "a" x ${bytes}; print "allocated\\n"'`;

  it("an allocation well under the limit succeeds", async () => {
    const f = await run(alloc(MAX_MEMORY_BYTES / 4));
    expect(f.text).toBe("allocated\n");
  });

  it("an allocation of the whole limit fails", async () => {
    const f = await run(alloc(MAX_MEMORY_BYTES));
    expect(f.text).toMatch(/^Out of memory!/);
    expect(f.exit?.exitCode).not.toBe(0);
  });
});

describe("limits: memory of all the command's processes together", () => {
  /** `n` python processes at once, each holding `mib` MiB it has written. */
  const hogs = (n: number, mib: number) =>
    `echo start; for i in $(seq ${n}); do python3 -c "import time; b = b'x' * (${mib} << 20); time.sleep(1.5)" & done; wait; echo end`;

  it("processes that fit together run to the end", async () => {
    const f = await run(hogs(2, 128));
    expect(f.text).toBe("start\nend\n");
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
  });

  it("processes each under the per-process limit but together over the command's cap fail as out of memory, output kept", async () => {
    const f = await run(hogs(3, 160));
    expect(f.text).toMatch(/^start\n[\s\S]*end\n$/);
    expect(f.exit?.error).toMatch(
      /^out of memory: the command's processes together reached the 384 MiB memory limit, and the kernel killed (one|\d+) of them; its output up to there is kept$/,
    );
  });
});

describe("limits: output (the spill cap)", () => {
  const produce = (bytes: number) => `head -c ${bytes} /dev/zero | tr '\\0' 'x'; sleep 1`;

  it("output of exactly the cap succeeds with everything in the spill file", async () => {
    const f = await run(produce(MAX_SPILL_BYTES));
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(f.metadata).toMatchObject({ totalBytes: MAX_SPILL_BYTES, truncated: true });
    expect(statSync(spillOnHost(host, f.metadata!.spillPath!)).size).toBe(MAX_SPILL_BYTES);
  });

  it("just under the cap likewise", async () => {
    const f = await run(produce(MAX_SPILL_BYTES - 1));
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(f.metadata).toMatchObject({ totalBytes: MAX_SPILL_BYTES - 1 });
  });

  it("one byte over: the command is stopped and fails, with the window and totals up to the cap", async () => {
    const id = execId();
    const f = await run("head -c 1048577 /dev/zero | tr '\\0' 'x'; sleep 30", { execId: id });
    const spillPath = `/toolwire/spill/${id}.log`;
    expect(f.exit?.error).toBe(
      `output reached the 1 MiB limit; the command was stopped; everything up to there is in ${spillPath}`,
    );
    expect(f.exit?.exitCode).not.toBe(0);
    expect(f.metadata).toMatchObject({ totalBytes: MAX_SPILL_BYTES, spillPath, truncated: true });
    expect(f.text.length).toBe(50 * 1024);
    expect(/^x*$/.test(f.text)).toBe(true);
    const spill = readFileSync(path.join(host.spillDir, path.basename(spillPath)));
    expect(spill.length).toBe(MAX_SPILL_BYTES);
    expect(spill.equals(Buffer.alloc(MAX_SPILL_BYTES, "x"))).toBe(true);
  });
});
