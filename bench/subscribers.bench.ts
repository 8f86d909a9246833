/**
 * Subscribers at scale (issues 20 and 29): 1,000 WebSockets opened at once to a running
 * bash invocation, through the real Worker (`wrangler dev`) and sandbox host the e2e
 * tests start (test/e2e/global-setup.ts), against the floor: the same 1,000 clients
 * opening `/v1/hello/:id/socket` on the same `wrangler dev`, where the same Worker hands
 * each socket to a hello Durable Object that accepts it hibernatable and sends 2 KB
 * (bench/hello-ws, served by a config made from wrangler.toml: bench/hello-config.ts,
 * decision 235). Rows are interleaved, and their order alternates round by round.
 *
 * Per row: time to first state (the first `tool_update`, or the hello message) p50 and
 * p99 as the clients saw it (bench/ws-swarm.ts, its own process), p99 against the floor
 * of the same round (the median of the rounds' ratios), the CPU seconds the server's
 * `wrangler dev` group spent until the last first state, workerd's resident memory per
 * subscriber (its RSS with all sockets open, less before), the most messages a socket
 * took to reach its first state, and the updates per socket per second once every
 * socket had its first state. The running call prints a line every 100 ms, so its
 * publications reach the sockets already open while the rest connect.
 *
 * Loopback only, bounded: BENCH_SUBSCRIBERS (default 1000) sockets, BENCH_SUBSCRIBER_ROUNDS
 * (default 3) rounds, 60 s per swarm at most. BENCH_BEFORE=<another checkout> adds that
 * checkout's stack as one more row, interleaved (before/after); BENCH_QUIET=1 a row for a
 * running call that prints nothing while the sockets connect (no publication fan-out);
 * BENCH_RELAYS=K a row of the floor spread over K hello objects (a relay fan-out's floor);
 * BENCH_PROFILE=1 a CPU profile of the Worker's isolate per swarm (bench/isolate-profile.ts)
 * and each server process's CPU. Not part of `npm test`:
 * `node bench/run.ts subscribers`.
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { ToolwireClient } from "../src/client/index.ts";
import { ROOT } from "../test/support/processes.ts";
import { helloConfig } from "./hello-config.ts";
import { type SelfTimes, startProfile } from "./isolate-profile.ts";
import { cpuByProcess, largestRssOf, usageOf } from "./process-group.ts";
import { load, median } from "./run-stats.ts";
import { type Stack, startStack } from "./stack.ts";

const COUNT = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const ROUNDS = Number(process.env.BENCH_SUBSCRIBER_ROUNDS ?? 3);
const SWARM_TIMEOUT_MS = 60_000;
const RUNNING = "for i in $(seq 1 1200); do echo line $i; sleep 0.1; done";
/** A running call that prints nothing after its first line: no publication reaches open sockets. */
const QUIET = "echo started; sleep 120";

interface Swarm {
  count: number;
  gotFirst: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  messagesToFirst: number;
  firstStateBytes: number;
}

interface Held {
  laterUpdates: number;
  heldUpdates: number;
  heldMs: number;
}

interface Row {
  swarm: Swarm;
  cpu: number;
  rssPerSubscriber: number;
  /** Updates per socket per second once every socket had its first state. */
  updateRate: number;
  /** With BENCH_PROFILE: the isolate's self times and each process's CPU until the last first state. */
  profile?: { times: SelfTimes; cpu: Record<string, number> };
}

const PROFILE = Boolean(process.env.BENCH_PROFILE);
/** BENCH_RELAYS=K: a row of the floor spread over K hello objects. */
const RELAYS = Number(process.env.BENCH_RELAYS ?? 0);

/** Opens the swarm, measures the server group while it connects and while it is held. */
async function swarm(url: string, until: string, stack: Stack): Promise<Row> {
  const pgid = stack.pgid;
  const rss0 = largestRssOf(pgid);
  const cpu0 = usageOf(pgid).cpu;
  const processes0 = cpuByProcess(pgid);
  const stopProfile = PROFILE && stack.inspectorUrl ? await startProfile(stack.inspectorUrl) : null;
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, "bench/ws-swarm.ts"),
      JSON.stringify({ url, count: COUNT, until, timeoutMs: SWARM_TIMEOUT_MS }),
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (tag: string) => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`the swarm ended before ${tag}`);
      if (value.startsWith(`${tag} `)) return JSON.parse(value.slice(tag.length + 1));
    }
  };
  const result = (await next("SWARM")) as Swarm;
  const cpu = usageOf(pgid).cpu - cpu0;
  const processes = Object.entries(cpuByProcess(pgid)).map(
    ([name, s]) => [name, s - (processes0[name] ?? 0)] as const,
  );
  const profile = stopProfile
    ? { times: await stopProfile(), cpu: Object.fromEntries(processes) }
    : undefined;
  await new Promise((r) => setTimeout(r, 3000));
  const rss = largestRssOf(pgid);
  child.stdin!.write("close\n");
  const held = (await next("HELD")) as Held;
  await new Promise((r) => child.once("exit", r));
  await new Promise((r) => setTimeout(r, 3000)); // let the server close them
  return {
    swarm: result,
    cpu,
    rssPerSubscriber: (rss - rss0) / COUNT,
    updateRate: held.heldUpdates / COUNT / (held.heldMs / 1000),
    ...(profile ? { profile } : {}),
  };
}

/** The isolate's busiest functions over a row's swarms, and its processes' CPU. */
function printProfile(name: string, rows: Row[]): void {
  const sum = (pick: (times: SelfTimes) => [string, number][]) => {
    const times = new Map<string, number>();
    for (const row of rows) {
      const profile = row.profile?.times;
      for (const [fn, ms] of profile ? pick(profile) : []) times.set(fn, (times.get(fn) ?? 0) + ms);
    }
    return [...times.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30);
  };
  const cpu = new Map<string, number>();
  for (const row of rows) {
    for (const [proc, s] of Object.entries(row.profile?.cpu ?? {})) {
      cpu.set(proc, (cpu.get(proc) ?? 0) + s);
    }
  }
  if (cpu.size === 0) return;
  for (const [kind, times] of [
    ["self", sum((t) => t.self)],
    ["total", sum((t) => t.total)],
  ] as const) {
    console.log(`\n${name}, ${rows.length} swarms: the isolate's ${kind} time (ms), top 30`);
    for (const [fn, ms] of times) console.log(`  ${ms.toFixed(0).padStart(7)}  ${fn}`);
  }
  console.log(
    `  CPU s by process: ${[...cpu.entries()].map(([p, s]) => `${p} ${s.toFixed(2)}`).join(", ")}`,
  );
}

function line(name: string, rows: Row[], floors: Row[]): string {
  const m = (f: (r: Row) => number) => median(rows.map(f));
  const ratio = median(rows.map((r, i) => r.swarm.p99Ms / floors[i]!.swarm.p99Ms));
  const got = rows.map((r) => `${r.swarm.gotFirst}/${r.swarm.count}`).join(", ");
  const cells = [
    name,
    m((r) => r.swarm.p50Ms).toFixed(0),
    m((r) => r.swarm.p99Ms).toFixed(0),
    `${ratio.toFixed(2)}×`,
    m((r) => r.cpu).toFixed(2),
    (m((r) => r.rssPerSubscriber) / 1024).toFixed(1),
    String(Math.max(...rows.map((r) => r.swarm.messagesToFirst))),
    m((r) => r.swarm.firstStateBytes).toFixed(0),
    m((r) => r.updateRate).toFixed(2),
    got,
  ];
  return `| ${cells.join(" | ")} |`;
}

/** 1,000 subscribers to a running bash call of `stack`, with the call cancelled after. */
async function toolwire(stack: Stack, command = RUNNING): Promise<Row> {
  const api = new ToolwireClient({ baseUrl: stack.apiUrl, token: stack.apiToken });
  const call = await api.createInvocation({ tool: "bash", args: { command } });
  await new Promise((r) => setTimeout(r, 1000));
  // socketUrl carries the subscribe token already.
  const row = await swarm(call.socketUrl, "tool_update", stack);
  await api.cancel(call.id);
  return row;
}

/**
 * 1,000 subscribers to a fresh, awake hello Durable Object on `stack` (the floor), or
 * spread over `relays` of them (the floor of a relay fan-out).
 */
async function hello(stack: Stack, round: number, relays = 1): Promise<Row> {
  const query = relays > 1 ? `?relays=${relays}` : "";
  const url = `${stack.apiUrl}/v1/hello/r${relays}-${round}/socket${query}`;
  // Woken first, as a call's object is: the same second before its swarm.
  const awake = await fetch(url);
  if (!awake.ok) throw new Error(`the hello route answered ${awake.status}`);
  await new Promise((r) => setTimeout(r, 1000));
  return swarm(url.replace(/^http/, "ws"), "any", stack);
}

export default async function bench(): Promise<void> {
  const stacks: Stack[] = [];
  const config = helloConfig(ROOT);
  try {
    const after = await startStack(ROOT, { wranglerConfig: config });
    stacks.push(after);
    const before = process.env.BENCH_BEFORE ? await startStack(process.env.BENCH_BEFORE) : null;
    if (before) stacks.push(before);
    const rows = {
      floor: [] as Row[],
      relays: [] as Row[],
      toolwire: [] as Row[],
      before: [] as Row[],
      quiet: [] as Row[],
    };
    console.log(
      `${COUNT} WebSockets opened at once (bench/ws-swarm.ts, own process), ${ROUNDS} interleaved rounds, medians; load average at start ${load()}`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const measures = [
        async () => rows.floor.push(await hello(after, round)),
        async () => rows.toolwire.push(await toolwire(after)),
        ...(before ? [async () => rows.before.push(await toolwire(before))] : []),
        ...(RELAYS > 1 ? [async () => rows.relays.push(await hello(after, round, RELAYS))] : []),
        ...(process.env.BENCH_QUIET
          ? [async () => rows.quiet.push(await toolwire(after, QUIET))]
          : []),
      ];
      if (round % 2 === 1) measures.reverse();
      for (const measure of measures) await measure();
      console.log(`round ${round + 1} done; load ${load()}`);
    }
    console.log("");
    console.log(
      "| server | first state p50 ms | p99 ms | p99 vs the floor | server CPU s | workerd RSS KiB per subscriber | messages to first state | first state bytes | updates per socket per s, held | first states |",
    );
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    console.log(line("hello DO, hibernatable, 2 KB (the floor)", rows.floor, rows.floor));
    if (rows.relays.length > 0) {
      console.log(line(`the same spread over ${RELAYS} hello DOs`, rows.relays, rows.floor));
    }
    if (before) {
      console.log(
        line(
          `Toolwire before (${process.env.BENCH_BEFORE}), running bash call`,
          rows.before,
          rows.floor,
        ),
      );
    }
    console.log(line("Toolwire, running bash call", rows.toolwire, rows.floor));
    if (rows.quiet.length > 0) {
      console.log(line("Toolwire, running call that prints nothing more", rows.quiet, rows.floor));
    }
    printProfile("the floor", rows.floor);
    printProfile("Toolwire", rows.toolwire);
    console.log("");
    console.log(`Load average at the end ${load()}`);
  } finally {
    for (const stack of stacks) await stack.stop();
    rmSync(path.dirname(config), { recursive: true, force: true });
  }
}
