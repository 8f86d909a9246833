/**
 * Sandbox exec throughput (issue 4, "Benchmark"): a 1 GB producer run through the
 * sandbox host (per-pipe decoding, the bounded view, the complete spill file, the paced
 * NDJSON stream read by a client) against the same producer piped into `cat > file`.
 * A third alternative is the floor for any Node host: a minimal Node process that pipes
 * the producer into a file with the same pause-on-full-buffer backpressure and does
 * nothing else. Reports the throughput ratios, the host process's peak RSS (VmHWM, its
 * own process), and the NDJSON stream's updates/s and bytes/s. Two producers: 'x' without newlines
 * (`tr`) and `yes` (two bytes per line, the worst case for line counting).
 * BENCH_SANDBOX_BYTES overrides the size (default 1e9). Best of BENCH_SANDBOX_RUNS (2).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";

const BYTES = Number(process.env.BENCH_SANDBOX_BYTES ?? 1e9);
const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 2);
const ROOT = path.resolve(import.meta.dirname, "..");

const PRODUCERS = [
  { name: "'x', no newlines", command: `head -c ${BYTES} /dev/zero | tr '\\0' x` },
  { name: "yes (y\\n lines)", command: `yes | head -c ${BYTES}` },
];

interface Host {
  url: string;
  token: string;
  child: ChildProcess;
}

async function startHost(root: string): Promise<Host> {
  const token = randomBytes(24).toString("hex");
  const child = spawn(process.execPath, [path.join(ROOT, "sandbox/main.ts")], {
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
  return { url, token, child };
}

/** Peak resident set of a process, in MiB. */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function baseline(command: string, dir: string): Promise<number> {
  const file = path.join(dir, "baseline.out");
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", `${command} | cat > ${file}`], { stdio: "ignore" });
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`baseline exited ${code}`)),
    );
  });
  const seconds = (performance.now() - start) / 1000;
  if (statSync(file).size !== BYTES) throw new Error("baseline wrote the wrong size");
  rmSync(file);
  return seconds;
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

async function nodeFloor(command: string, dir: string): Promise<number> {
  const file = path.join(dir, "floor.out");
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", NODE_FLOOR, command, file], { stdio: "ignore" });
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`node floor exited ${code}`)),
    );
  });
  const seconds = (performance.now() - start) / 1000;
  if (statSync(file).size !== BYTES) throw new Error("node floor wrote the wrong size");
  rmSync(file);
  return seconds;
}

interface ExecStats {
  seconds: number;
  updates: number;
  streamBytes: number;
}

async function throughSandbox(host: Host, command: string): Promise<ExecStats> {
  const execId = `bench-${randomBytes(4).toString("hex")}`;
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
  if (!last.includes('"kind":"exit","exitCode":0'))
    throw new Error(`exec did not exit cleanly: ${last}`);
  return { seconds, updates, streamBytes };
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-bench-sandbox-"));
  console.log(
    `Producer size ${(BYTES / 1e9).toFixed(2)} GB, best of ${RUNS}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; a fresh host per producer`,
  );
  console.log("");
  console.log(
    "| producer | `cat > file` s | Node pipe → file s | sandbox s | vs cat (aim ≥0.8) | vs Node floor | sandbox MB/s | NDJSON updates/s | NDJSON KB/s | host RSS idle → peak MiB |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  try {
    for (const producer of PRODUCERS) {
      const host = await startHost(dir);
      try {
        const idle = peakRssMiB(host.child.pid!);
        let base = Number.POSITIVE_INFINITY;
        let floor = Number.POSITIVE_INFINITY;
        let best: ExecStats | null = null;
        for (let run = 0; run < RUNS; run++) {
          base = Math.min(base, await baseline(producer.command, dir));
          floor = Math.min(floor, await nodeFloor(producer.command, dir));
          const stats = await throughSandbox(host, producer.command);
          if (!best || stats.seconds < best.seconds) best = stats;
          rmSync(path.join(dir, ".toolwire"), { recursive: true, force: true });
        }
        const s = best!;
        const peak = peakRssMiB(host.child.pid!);
        console.log(
          `| ${producer.name} | ${base.toFixed(2)} | ${floor.toFixed(2)} | ${s.seconds.toFixed(2)} | ${(base / s.seconds).toFixed(2)}× | ${(floor / s.seconds).toFixed(2)}× | ${(BYTES / 1e6 / s.seconds).toFixed(0)} | ${(s.updates / s.seconds).toFixed(1)} | ${(s.streamBytes / 1024 / s.seconds).toFixed(1)} | ${idle.toFixed(0)} → ${peak.toFixed(0)} |`,
        );
      } finally {
        host.child.kill("SIGTERM");
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
