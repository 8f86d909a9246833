/**
 * Created sandboxes on the host backend (issue 18): time to create one and to the
 * first byte of its first command, with a loop-mounted disk against a plain directory
 * (the cost of the quota) and against a command in the default workspace (no create at
 * all); then 50 created at once: create p50/p99 and the host's memory per idle sandbox.
 * `node bench/run.ts sandboxes` (as root, for loop mounts). Noisy on a shared machine.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SANDBOX_CONFIG, startSandboxHost } from "../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS, type DiskMode } from "../sandbox/sandboxes/config.ts";
import { SandboxClient } from "../src/execenv/index.ts";

const ROUNDS = 10;
const AT_ONCE = 50;

function rssMiB(): number {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS"));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

async function withHost<T>(disk: DiskMode, work: (h: Bench) => Promise<T>): Promise<T> {
  const root = mkdtempSync(path.join(tmpdir(), "tw-bench-ws-"));
  const dir = mkdtempSync(path.join(tmpdir(), "tw-bench-sbx-"));
  const token = randomBytes(16).toString("hex");
  const host = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    token,
    port: 0,
    root,
    rgPath: null,
    sandboxes: { dir, disk, maxSandboxes: 200, limits: DEFAULT_SANDBOX_LIMITS },
  });
  const bench = new Bench(host.url, token);
  try {
    return await work(bench);
  } finally {
    await host.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

class Bench {
  readonly url: string;
  readonly token: string;

  constructor(url: string, token: string) {
    this.url = url;
    this.token = token;
  }

  async create(): Promise<{ id: string; ms: number }> {
    const id = `sbx_default_${randomBytes(10).toString("hex")}`;
    const t0 = performance.now();
    const res = await fetch(`${this.url}/v1/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify({ id }),
    });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    return { id, ms: performance.now() - t0 };
  }

  /** Milliseconds from the request to the first output byte of `echo first`. */
  async firstOutput(base: string): Promise<number> {
    const client = new SandboxClient(base, this.token);
    const t0 = performance.now();
    let ms = 0;
    for await (const u of client.exec({
      execId: `b-${randomBytes(6).toString("hex")}`,
      command: "echo first",
    })) {
      if (
        ms === 0 &&
        (u.kind === "append" || u.kind === "replace") &&
        JSON.stringify(u).includes("first")
      ) {
        ms = performance.now() - t0;
      }
    }
    return ms;
  }
}

function median(xs: number[]): number {
  return quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

export default async function main(): Promise<void> {
  const rows: string[] = [];
  let loopCreate = 0;
  for (const disk of ["loop", "none"] as const) {
    const [create, first] = await withHost(disk, async (b) => {
      const creates: number[] = [];
      const firsts: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const { id, ms } = await b.create();
        creates.push(ms);
        firsts.push(await b.firstOutput(`${b.url}/sandboxes/${id}`));
      }
      return [median(creates), median(firsts)];
    });
    if (disk === "loop") loopCreate = create;
    rows.push(
      `| create, disk=${disk} | ${create.toFixed(1)} ms | first output ${first.toFixed(1)} ms | ${disk === "none" ? `loop/none ${(loopCreate / create).toFixed(2)}×` : ""} |`,
    );
  }
  const defaultFirst = await withHost("none", async (b) => {
    const firsts: number[] = [];
    for (let i = 0; i < ROUNDS; i++) firsts.push(await b.firstOutput(b.url));
    return median(firsts);
  });
  rows.push(`| no create (default workspace) | — | first output ${defaultFirst.toFixed(1)} ms | |`);

  const atOnce = await withHost("loop", async (b) => {
    await b.firstOutput(b.url);
    const before = rssMiB();
    const results = await Promise.all(Array.from({ length: AT_ONCE }, () => b.create()));
    const firsts = await Promise.all(
      results.map((r) => b.firstOutput(`${b.url}/sandboxes/${r.id}`)),
    );
    await new Promise((r) => setTimeout(r, 500));
    const after = rssMiB();
    const sorted = results.map((r) => r.ms).sort((x, y) => x - y);
    return {
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      first50: median(firsts),
      perSandbox: (after - before) / AT_ONCE,
    };
  });
  console.log(`Each row: median of ${ROUNDS}; the ${AT_ONCE}-at-once figures from one burst.\n`);
  console.log("| what | create | first output | ratio |");
  console.log("|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(
    `| ${AT_ONCE} at once, disk=loop | p50 ${atOnce.p50.toFixed(0)} ms, p99 ${atOnce.p99.toFixed(0)} ms | median ${atOnce.first50.toFixed(0)} ms (all ${AT_ONCE} at once) | host RSS +${atOnce.perSandbox.toFixed(2)} MiB per idle sandbox |`,
  );
}
