/**
 * Sandbox exec throughput (issue 4, "Benchmark"): a 1 GB producer run through the
 * sandbox host (per-pipe decoding, the bounded view, the complete spill file, the paced
 * NDJSON stream read by a client) against the same producer piped into `cat > file`.
 * A third alternative is the floor for any Node host: a minimal Node process that pipes
 * the producer into a file through a `WriteStream` with pause-on-full-buffer
 * backpressure and does nothing else.
 *
 * Two hosts run side by side: `node sandbox/main.ts` (Node's TypeScript loader) and the
 * optional deployment bundle (`npm run build:sandbox`, built here into a temp dir).
 * For each: the host process's own memory — peak resident set (VmHWM, which counts the
 * pages of the node binary it touched) and peak private memory (RssAnon, sampled every
 * 10 ms, from after one warm-up exec of `seq 1 300000`; the fresh host's figure is
 * printed before it) — its CPU time per exec (/proc/<pid>/stat), and the NDJSON stream's updates/s
 * and bytes/s. Every run checks the exit and the spill file's size.
 *
 * Two producers: 'x' without newlines (`tr`) and `yes` (two bytes per line, the worst
 * case for line counting). Runs are interleaved (cat, floor, each host) and reported as
 * medians. BENCH_SANDBOX_BYTES overrides the size (default 1e9), BENCH_SANDBOX_RUNS the
 * number of runs (default 3). BENCH_SANDBOX_BEFORE=<path to another checkout's
 * sandbox/main.ts> adds that host as a third one, measured the same way (before/after).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildSandboxHost } from "../sandbox/build.ts";
import { load, median } from "./run-stats.ts";

const BYTES = Number(process.env.BENCH_SANDBOX_BYTES ?? 1e9);
const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 3);
const BEFORE = process.env.BENCH_SANDBOX_BEFORE;
const ROOT = path.resolve(import.meta.dirname, "..");

const PRODUCERS = [
  {
    name: "`head -c N /dev/zero \\| tr '\\0' x`",
    command: `head -c ${BYTES} /dev/zero | tr '\\0' x`,
  },
  { name: "`yes \\| head -c N`", command: `yes | head -c ${BYTES}` },
];

interface Host {
  name: string;
  url: string;
  token: string;
  child: ChildProcess;
  root: string;
  /** Private memory of the fresh host, before any exec, MiB. */
  fresh: number;
  /** Memory of the host after one small warm-up exec, before the measured ones, MiB. */
  idle: Memory;
  /** Highest private memory seen while sampling, MiB. */
  peakAnon: number;
  sampler: NodeJS.Timeout;
}

interface Memory {
  rss: number;
  hwm: number;
  anon: number;
}

async function startHost(name: string, entry: string, root: string): Promise<Host> {
  const token = randomBytes(24).toString("hex");
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, SANDBOX_TOKEN: token, PORT: "0", HOST: "127.0.0.1", SANDBOX_ROOT: root },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (line: string) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`sandbox host exited (${code})`)));
  });
  const fresh = memory(child.pid!).anon;
  const host: Host = {
    name,
    url,
    token,
    child,
    root,
    fresh,
    idle: memory(child.pid!),
    peakAnon: fresh,
    sampler: setInterval(() => {
      host.peakAnon = Math.max(host.peakAnon, memory(child.pid!).anon);
    }, 10),
  };
  // The first exec of a host compiles its code paths and sizes V8's heap: measured
  // apart ("fresh"), so that "idle → peak" is what the streams themselves cost.
  await throughSandbox(host, "seq 1 300000", 1_988_895);
  host.idle = memory(child.pid!);
  host.peakAnon = host.idle.anon;
  return host;
}

function stopHost(host: Host): void {
  clearInterval(host.sampler);
  host.child.kill("SIGTERM");
}

/** Resident set, its peak and its private (anonymous) part of a process, in MiB. */
function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM"), anon: kb("RssAnon") };
}

/** User + system CPU seconds a process has used so far (all its threads). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function timed(argv: string[], file: string): Promise<number> {
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: "ignore" });
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${argv.join(" ")} exited ${code}`)),
    );
  });
  const seconds = (performance.now() - start) / 1000;
  if (statSync(file).size !== BYTES) throw new Error(`${file} has the wrong size`);
  rmSync(file);
  return seconds;
}

/** The command itself writing into a file (what "end to end" compares with). */
function intoFile(command: string, dir: string): Promise<number> {
  const file = path.join(dir, "direct.out");
  return timed(["/bin/sh", "-c", `(${command}) > ${file}`], file);
}

function baseline(command: string, dir: string): Promise<number> {
  const file = path.join(dir, "baseline.out");
  return timed(["/bin/sh", "-c", `${command} | cat > ${file}`], file);
}

/** The least any Node host does: pipe → file with backpressure, in its own process. */
const NODE_FLOOR = `
const { spawn } = require("node:child_process");
const { createWriteStream } = require("node:fs");
const [command, file] = process.argv.slice(1);
const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] });
const out = createWriteStream(file, { highWaterMark: 1 << 20 });
for (const pipe of [child.stdout, child.stderr]) pipe.on("data", (c) => {
  if (!out.write(c)) { pipe.pause(); out.once("drain", () => pipe.resume()); }
});
child.on("close", () => out.end());
`;

function nodeFloor(command: string, dir: string): Promise<number> {
  const file = path.join(dir, "floor.out");
  return timed([process.execPath, "-e", NODE_FLOOR, command, file], file);
}

interface ExecStats {
  seconds: number;
  cpu: number;
  updates: number;
  streamBytes: number;
}

async function throughSandbox(host: Host, command: string, bytes = BYTES): Promise<ExecStats> {
  const execId = `bench-${randomBytes(4).toString("hex")}`;
  const cpuBefore = cpuSeconds(host.child.pid!);
  const start = performance.now();
  const res = await fetch(`${host.url}/v1/exec`, {
    method: "POST",
    headers: { authorization: `Bearer ${host.token}`, "content-type": "application/json" },
    body: JSON.stringify({ execId, command }),
  });
  if (!res.ok || !res.body) throw new Error(`exec failed: ${res.status} ${await res.text()}`);
  let updates = 0;
  let streamBytes = 0;
  let last = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    streamBytes += chunk.byteLength;
    for (const b of chunk) if (b === 10) updates++;
    last = Buffer.from(chunk.subarray(Math.max(0, chunk.byteLength - 200))).toString("utf8");
  }
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuSeconds(host.child.pid!) - cpuBefore;
  if (!last.includes('"kind":"exit","exitCode":0'))
    throw new Error(`exec did not exit cleanly: ${last}`);
  // The host's spill folder: SANDBOX_SPILL_DIR's default, beside the workspace (decision 160).
  const spill = path.join(`${host.root}.spill`, `${execId}.log`);
  if (statSync(spill).size !== bytes)
    throw new Error(`${host.name}: spill file has the wrong size`);
  rmSync(spill);
  return { seconds, cpu, updates, streamBytes };
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-bench-sandbox-"));
  const bundle = path.join(dir, "sandbox-host.mjs");
  const bundleBytes = await buildSandboxHost(bundle);
  console.log(
    `Producer size ${(BYTES / 1e9).toFixed(2)} GB, medians of ${RUNS} interleaved runs; fresh hosts per producer; bundle ${(bundleBytes / 1024).toFixed(0)} KiB; load average at start ${load()}`,
  );
  console.log("");
  console.log(
    "| producer | host | `cat > file` s | `cmd > file` s | Node floor s | sandbox s | vs cat (aim ≥0.9) | vs `cmd > file` (aim ≥0.9) | vs floor | host CPU s/GB (aim ≤0.5) | NDJSON updates/s | NDJSON KB/s | RSS idle → peak MiB | private fresh → idle → peak MiB (aim growth idle → peak ≤8) |",
  );
  console.log(
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  try {
    for (const producer of PRODUCERS) {
      const hosts = [
        await startHost(
          "`node sandbox/main.ts`",
          path.join(ROOT, "sandbox/main.ts"),
          path.join(dir, "ts"),
        ),
        await startHost("bundle (`build:sandbox`)", bundle, path.join(dir, "bundle")),
      ];
      if (BEFORE)
        hosts.unshift(await startHost("before", path.resolve(BEFORE), path.join(dir, "before")));
      try {
        const base: number[] = [];
        const direct: number[] = [];
        const floor: number[] = [];
        const stats = hosts.map((): ExecStats[] => []);
        for (let run = 0; run < RUNS; run++) {
          base.push(await baseline(producer.command, dir));
          direct.push(await intoFile(producer.command, dir));
          floor.push(await nodeFloor(producer.command, dir));
          for (const [i, host] of hosts.entries()) {
            stats[i]!.push(await throughSandbox(host, producer.command));
          }
        }
        const b = median(base);
        const d = median(direct);
        const f = median(floor);
        for (const [i, host] of hosts.entries()) {
          const runs = stats[i]!;
          const s = median(runs.map((r) => r.seconds));
          const updates = median(runs.map((r) => r.updates / r.seconds));
          const kbps = median(runs.map((r) => r.streamBytes / 1024 / r.seconds));
          const peak = memory(host.child.pid!);
          console.log(
            `| ${producer.name} | ${host.name} | ${b.toFixed(2)} | ${d.toFixed(2)} | ${f.toFixed(2)} | ${s.toFixed(2)} | ${(b / s).toFixed(2)}× | ${(d / s).toFixed(2)}× | ${(f / s).toFixed(2)}× | ${(median(runs.map((r) => r.cpu)) / (BYTES / 1e9)).toFixed(2)} | ${updates.toFixed(1)} | ${kbps.toFixed(1)} | ${host.idle.hwm.toFixed(0)} → ${peak.hwm.toFixed(0)} | ${host.fresh.toFixed(0)} → ${host.idle.anon.toFixed(0)} → ${host.peakAnon.toFixed(0)} |`,
          );
        }
      } finally {
        for (const host of hosts) stopHost(host);
      }
    }
    console.log("");
    console.log(`Load average at the end ${load()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
