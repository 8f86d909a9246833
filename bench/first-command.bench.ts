/**
 * A created sandbox's first command on the host (decision 276): create, then after
 * `BENCH_FIRST_GAP_MS` (default 50: about what the create's answer and the call take
 * through the Worker, the time a jail started at the create has), `echo first` through
 * `POST /v1/exec`, to its first output byte and to the end of its stream. The named
 * alternative, in the same run and interleaved: the same host with
 * `SANDBOX_JAIL_AHEAD_MS=0` (the first command starts its own jail). Both hosts in this
 * process, root (loop disks, network namespaces), 4 disks and networks made ahead.
 * `BENCH_FIRST_RUNS` runs of each (default 40), after 3 warm-up runs each.
 * `PATH=$PWD/node_modules/.bin:$PATH node bench/run.ts first-command`
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SANDBOX_CONFIG, type SandboxHost, startSandboxHost } from "../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS } from "../sandbox/sandboxes/config.ts";
import { SandboxClient } from "../src/execenv/index.ts";
import { load, median, percentile } from "./run-stats.ts";

const RUNS = Number(process.env.BENCH_FIRST_RUNS ?? 40);
const GAP_MS = Number(process.env.BENCH_FIRST_GAP_MS ?? 50);

interface Side {
  name: string;
  host: SandboxHost;
  token: string;
  folders: string[];
  create: number[];
  first: number[];
  end: number[];
}

async function side(name: string, jailAheadMs: number | undefined): Promise<Side> {
  const root = mkdtempSync(path.join(tmpdir(), "tw-first-ws-"));
  const dir = mkdtempSync(path.join(tmpdir(), "tw-first-sbx-"));
  const token = randomBytes(16).toString("hex");
  const host = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    token,
    port: 0,
    root,
    rgPath: null,
    egress: { ...DEFAULT_SANDBOX_CONFIG.egress, available: true },
    sandboxes: {
      dir,
      disk: "loop",
      maxSandboxes: 64,
      poolSize: 4,
      limits: DEFAULT_SANDBOX_LIMITS,
      ...(jailAheadMs === undefined ? {} : { jailAheadMs }),
    },
  });
  await host.sandboxes.ready?.filled();
  return {
    name,
    host,
    token,
    folders: [root, `${root}.spill`, dir],
    create: [],
    first: [],
    end: [],
  };
}

/** One create, the gap, then its first command; the sandbox is deleted after. */
async function once(s: Side, keep: boolean): Promise<void> {
  const id = `sbx_default_${randomBytes(10).toString("hex")}`;
  const auth = { authorization: `Bearer ${s.token}` };
  const t0 = performance.now();
  const res = await fetch(`${s.host.url}/v1/sandboxes`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ id }),
  });
  await res.text();
  if (res.status !== 201) throw new Error(`create: ${res.status}`);
  const created = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  const client = new SandboxClient(`${s.host.url}/sandboxes/${id}`, s.token);
  const t1 = performance.now();
  let first = 0;
  for await (const update of client.exec({
    execId: `b-${randomBytes(6).toString("hex")}`,
    command: "echo first",
  })) {
    if (first === 0 && JSON.stringify(update).includes("first")) first = performance.now() - t1;
  }
  const end = performance.now() - t1;
  if (keep) {
    s.create.push(created);
    s.first.push(first);
    s.end.push(end);
  }
  await fetch(`${s.host.url}/v1/sandboxes/${id}`, { method: "DELETE", headers: auth });
}

export default async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log("skipped: needs root (loop disks and network namespaces)");
    return;
  }
  const sides = [
    await side("jail started at the create (default)", undefined),
    await side("SANDBOX_JAIL_AHEAD_MS=0", 0),
  ];
  try {
    console.log(
      `${RUNS} runs of each, interleaved, ${GAP_MS} ms from the create's answer to the call; load before: ${load()}\n`,
    );
    for (let run = -3; run < RUNS; run++) {
      const order = run % 2 === 0 ? sides : [...sides].reverse();
      for (const s of order) await once(s, run >= 0);
    }
    const base = sides[0]!;
    console.log(
      "| side | create | first output, median | p95 | stream end, median | p95 | × the default (end) |",
    );
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const s of sides) {
      console.log(
        `| ${s.name} | ${median(s.create).toFixed(1)} ms | ${median(s.first).toFixed(1)} ms | ${percentile(s.first, 95).toFixed(1)} ms | ${median(s.end).toFixed(1)} ms | ${percentile(s.end, 95).toFixed(1)} ms | ${(median(s.end) / median(base.end)).toFixed(2)} |`,
      );
    }
    console.log(`\nload after: ${load()}`);
  } finally {
    for (const s of sides) {
      await s.host.close();
      for (const folder of s.folders) rmSync(folder, { recursive: true, force: true });
    }
  }
}
