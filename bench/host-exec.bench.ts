/**
 * A short command on the sandbox host (issue 29: the call is most of create to first
 * output): `echo first` through the host's `POST /v1/exec`, from the request until its
 * NDJSON stream ends, on a host in this process. The named alternatives, in the same
 * run and interleaved: the same jail started straight from this process (`bwrap … bash
 * -c 'echo first'`, spawned asynchronously, until it exits: the floor any host pays),
 * and with `BENCH_BEFORE=<another checkout>` that checkout's host, measured the same way.
 * `BENCH_HOST_EXEC_RUNS` runs of each (default 100), after 5 warm-up runs each.
 * `PATH=$PWD/node_modules/.bin:$PATH BENCH_BEFORE=/tmp/tw-before node bench/run.ts host-exec`
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { load, median, percentile } from "./run-stats.ts";

const RUNS = Number(process.env.BENCH_HOST_EXEC_RUNS ?? 100);
const TOKEN = "bench-host-exec-token-0123456789abcdef";
const COMMAND = "echo first";

interface Host {
  url: string;
  close(): Promise<void>;
}

type Side = { name: string; once: (run: number) => Promise<number> };

/** Starts the sandbox host of the checkout at `root`, in this process. */
async function startHost(root: string, workspace: string): Promise<Host> {
  const mod = (await import(path.join(root, "sandbox/index.ts"))) as {
    DEFAULT_SANDBOX_CONFIG: Record<string, unknown>;
    startSandboxHost(config: Record<string, unknown>): Promise<Host>;
  };
  return mod.startSandboxHost({
    ...mod.DEFAULT_SANDBOX_CONFIG,
    token: TOKEN,
    port: 0,
    root: workspace,
    rgPath: null,
  });
}

/** One exec of `COMMAND` on `host`, until its stream ends; checks its output. */
async function execOnce(host: Host, id: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${host.url}/v1/exec`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ execId: id, command: COMMAND }),
  });
  const text = await res.text();
  const took = performance.now() - started;
  if (!res.ok || !text.includes("first")) throw new Error(`exec answered ${res.status} ${text}`);
  return took;
}

/** The jail alone: bubblewrap as the host wraps a command, started from here. */
function jailOnce(): Promise<number> {
  const started = performance.now();
  const child = spawn(
    "bwrap",
    [
      ...[
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
      ],
      ...["--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc", "--dev", "/dev"],
      ...["--proc", "/proc", "--tmpfs", "/tmp", "--remount-ro", "/", "--unshare-all"],
      ...["--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000"],
      ...["--die-with-parent", "--new-session", "--", "/bin/bash", "-c", COMMAND],
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0 || !out.includes("first")) reject(new Error(`bwrap exited ${code}: ${out}`));
      else resolve(performance.now() - started);
    });
  });
}

export default async function hostExec(): Promise<void> {
  const scratch = mkdtempSync(path.join(tmpdir(), "toolwire-bench-host-exec-"));
  const hosts: Host[] = [];
  const sides: Side[] = [];
  try {
    const here = await startHost(path.resolve(import.meta.dirname, ".."), path.join(scratch, "a"));
    hosts.push(here);
    sides.push({ name: "this checkout", once: (run) => execOnce(here, `now-${run}`) });
    const before = process.env.BENCH_BEFORE;
    if (before) {
      const then = await startHost(path.resolve(before), path.join(scratch, "b"));
      hosts.push(then);
      sides.push({ name: `before (${before})`, once: (run) => execOnce(then, `before-${run}`) });
    }
    sides.push({ name: "the jail alone (bwrap, spawned here)", once: () => jailOnce() });

    console.log(`${RUNS} runs of each, interleaved; load before: ${load()}\n`);
    const times = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    for (let run = -5; run < RUNS; run++) {
      // The order turns each run, so that no side always follows another.
      const order = sides.map((_, i) => sides[(i + Math.abs(run)) % sides.length]!);
      for (const side of order) {
        const took = await side.once(run + 5);
        if (run >= 0) times.get(side.name)!.push(took);
      }
    }
    const floor = median(times.get(sides.at(-1)!.name)!);
    const first = median(times.get(sides[0]!.name)!);
    console.log("| side | median | p95 | × the jail alone | × this checkout |");
    console.log("| --- | ---: | ---: | ---: | ---: |");
    for (const side of sides) {
      const t = times.get(side.name)!;
      const m = median(t);
      console.log(
        `| ${side.name} | ${m.toFixed(1)} ms | ${percentile(t, 95).toFixed(1)} ms | ${(m / floor).toFixed(2)} | ${(m / first).toFixed(2)} |`,
      );
    }
    console.log(`\nload after: ${load()}`);
  } finally {
    for (const host of hosts) await host.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
