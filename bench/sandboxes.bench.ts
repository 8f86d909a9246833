/**
 * Created sandboxes on the host backend (issues 18 and 29): time to create one and to
 * the first byte of its first command, as a root host makes them (a loop-mounted 1 GiB
 * disk and a network namespace of its own), with its disk and network made ahead
 * (`SANDBOX_POOL_SIZE`, decision 225) against made on demand (pool 0), against the
 * checkout `BENCH_BEFORE` names when given, and against a plain directory with no
 * network (the floor: no quota, no namespace) and a command in the default workspace
 * (no create at all). Then 50 created at once, each way: create p50/p99, how many were
 * refused, and the memory per idle sandbox (the host's RSS and its child processes' private
 * memory); and a burst past `SANDBOX_MAX_SANDBOXES`: every refusal a 429 with Retry-After.
 * Each host is started in this process; rows of one table come from one run.
 * `PATH=$PWD/node_modules/.bin:$PATH BENCH_BEFORE=/tmp/tw-before node bench/run.ts sandboxes`
 * (as root, for loop mounts and namespaces). Noisy on a shared machine: read the ratios.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SandboxConfig } from "../sandbox/config.ts";
import type { SandboxHost } from "../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS, type DiskMode } from "../sandbox/sandboxes/config.ts";
import { SandboxClient } from "../src/execenv/index.ts";
import { load } from "./run-stats.ts";

const ROUNDS = Number(process.env.BENCH_SANDBOXES_ROUNDS ?? 20);
const AT_ONCE = 50;
const POOL = 4;
const ROOT = path.resolve(import.meta.dirname, "..");

interface Way {
  name: string;
  /** The checkout whose host runs (this one, or `BENCH_BEFORE`). */
  checkout: string;
  disk: DiskMode;
  network: boolean;
  poolSize: number;
}

function kib(file: string, field: string): number {
  const line = readFileSync(file, "utf8")
    .split("\n")
    .find((l) => l.startsWith(field));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

/** This process's RSS and its children's private (anonymous) memory, in MiB. */
function memoryMiB(): { host: number; children: number } {
  const pid = process.pid;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  let anon = 0;
  for (const child of children) {
    try {
      anon += kib(`/proc/${child}/status`, "RssAnon");
    } catch {}
  }
  return { host: kib("/proc/self/status", "VmRSS") / 1024, children: anon / 1024 };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

function median(xs: number[]): number {
  return quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

async function withHost<T>(
  way: Way,
  maxSandboxes: number,
  work: (b: Bench, host: SandboxHost) => Promise<T>,
): Promise<T> {
  const mod = (await import(path.join(way.checkout, "sandbox/index.ts"))) as {
    DEFAULT_SANDBOX_CONFIG: Omit<SandboxConfig, "token" | "root" | "rgPath">;
    startSandboxHost(config: SandboxConfig): Promise<SandboxHost>;
  };
  const root = mkdtempSync(path.join(tmpdir(), "tw-bench-ws-"));
  const dir = mkdtempSync(path.join(tmpdir(), "tw-bench-sbx-"));
  const token = randomBytes(16).toString("hex");
  const host = await mod.startSandboxHost({
    ...mod.DEFAULT_SANDBOX_CONFIG,
    token,
    port: 0,
    root,
    rgPath: null,
    egress: { ...mod.DEFAULT_SANDBOX_CONFIG.egress, available: way.network },
    sandboxes: {
      dir,
      disk: way.disk,
      maxSandboxes,
      poolSize: way.poolSize,
      limits: DEFAULT_SANDBOX_LIMITS,
    },
  });
  const bench = new Bench(host.url, token);
  try {
    // A host that has been up a while: what it makes ahead is there.
    await host.sandboxes.ready?.filled();
    return await work(bench, host);
  } finally {
    await host.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(`${root}.spill`, { recursive: true, force: true });
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

  /** Creates one; its time, or the refusal's status and Retry-After. */
  async create(): Promise<{ id: string; ms: number; status: number; retryAfter: string | null }> {
    const id = `sbx_default_${randomBytes(10).toString("hex")}`;
    const t0 = performance.now();
    const res = await fetch(`${this.url}/v1/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify({ id }),
    });
    const ms = performance.now() - t0;
    await res.text();
    if (res.status !== 201 && res.status !== 429) throw new Error(`create: ${res.status}`);
    return { id, ms, status: res.status, retryAfter: res.headers.get("retry-after") };
  }

  async remove(id: string): Promise<void> {
    await fetch(`${this.url}/v1/sandboxes/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${this.token}` },
    });
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

/** `ROUNDS` creates one at a time, each followed by its first command, then deleted. */
async function oneAtATime(way: Way): Promise<{ create: number; first: number }> {
  return withHost(way, 64, async (b) => {
    const creates: number[] = [];
    const firsts: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const { id, ms } = await b.create();
      creates.push(ms);
      firsts.push(await b.firstOutput(`${b.url}/sandboxes/${id}`));
      await b.remove(id);
    }
    return { create: median(creates), first: median(firsts) };
  });
}

async function burst(way: Way) {
  // SANDBOX_MAX_SANDBOXES at its default (64): fifty at once is below it.
  return withHost(way, 64, async (b) => {
    await b.firstOutput(b.url);
    const before = memoryMiB();
    const results = await Promise.all(Array.from({ length: AT_ONCE }, () => b.create()));
    const made = results.filter((r) => r.status === 201);
    const firsts = await Promise.all(made.map((r) => b.firstOutput(`${b.url}/sandboxes/${r.id}`)));
    await new Promise((r) => setTimeout(r, 1000));
    const after = memoryMiB();
    const sorted = results.map((r) => r.ms).sort((x, y) => x - y);
    return {
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      refused: AT_ONCE - made.length,
      first: median(firsts),
      host: (after.host - before.host) / made.length,
      children: (after.children - before.children) / made.length,
    };
  });
}

/** A burst of `limit + 10` creates on a host that holds `limit`: what the 10 past it get. */
async function pastTheLimit(way: Way, limit: number) {
  return withHost(way, limit, async (b) => {
    const results = await Promise.all(Array.from({ length: limit + 10 }, () => b.create()));
    const refused = results.filter((r) => r.status === 429);
    return {
      made: results.length - refused.length,
      refused: refused.length,
      retryAfter: [...new Set(refused.map((r) => r.retryAfter ?? "none"))].join(", "),
    };
  });
}

export default async function main(): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const ways: Way[] = [
    { name: "made ahead (pool 4)", checkout: ROOT, disk: "loop", network: asRoot, poolSize: POOL },
    { name: "made on demand (pool 0)", checkout: ROOT, disk: "loop", network: asRoot, poolSize: 0 },
  ];
  const before = process.env.BENCH_BEFORE;
  if (before) {
    ways.push({
      name: `before (${path.basename(before)})`,
      checkout: path.resolve(before),
      disk: "loop",
      network: asRoot,
      poolSize: 0,
    });
  }
  const floor: Way = {
    name: "plain directory, no network",
    checkout: ROOT,
    disk: "none",
    network: false,
    poolSize: 0,
  };
  console.log(
    `Each create row: median of ${ROUNDS} (create, first command, delete; one at a time). Disk: 1 GiB loop-mounted ext4; network: a namespace of its own (root: ${asRoot}). Load before: ${load()}\n`,
  );
  console.log("| way | create | first output |");
  console.log("|---|---:|---:|");
  for (const way of [...ways, floor]) {
    const { create, first } = await oneAtATime(way);
    console.log(`| ${way.name} | ${create.toFixed(1)} ms | ${first.toFixed(1)} ms |`);
  }
  const defaultFirst = await withHost(floor, 64, async (b) => {
    const firsts: number[] = [];
    for (let i = 0; i < ROUNDS; i++) firsts.push(await b.firstOutput(b.url));
    return median(firsts);
  });
  console.log(`| no create (default workspace) | — | ${defaultFirst.toFixed(1)} ms |`);

  console.log(
    `\n${AT_ONCE} creates at once (below SANDBOX_MAX_SANDBOXES=64), then one echo in each, all at once:\n`,
  );
  console.log(
    "| way | create p50 | create p99 | refused | first output (median) | host RSS per idle sandbox | its processes' private memory |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  // What it takes to meet a burst of fifty: as many made ahead (decision 254 made an
  // idle network cost no process, so a large pool costs disks and loop devices).
  const bigPool: Way = { ...ways[0]!, name: `made ahead (pool ${AT_ONCE})`, poolSize: AT_ONCE };
  for (const way of [...ways, bigPool]) {
    const r = await burst(way);
    console.log(
      `| ${way.name} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${r.refused} | ${r.first.toFixed(0)} ms | ${r.host.toFixed(2)} MiB | ${r.children.toFixed(2)} MiB |`,
    );
  }
  const limit = 20;
  console.log(`\nA burst of ${limit + 10} creates on a host that holds ${limit}:\n`);
  console.log("| way | made | refused (429) | their Retry-After |");
  console.log("|---|---:|---:|---|");
  for (const way of ways.slice(0, 1)) {
    const r = await pastTheLimit(way, limit);
    console.log(`| ${way.name} | ${r.made} | ${r.refused} | ${r.retryAfter} |`);
  }
  console.log(`\nLoad after: ${load()}`);
}
