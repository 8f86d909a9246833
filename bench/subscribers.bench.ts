/**
 * Subscribers at scale (issue 20): 1,000 WebSockets opened at once to a running bash
 * invocation, through the real Worker (`wrangler dev`) and sandbox host the e2e tests
 * start (test/e2e/global-setup.ts), against the same 1,000 clients connecting to a
 * hello-world Worker (bench/hello-ws: accept, send one message) run by the same
 * wrangler, in the same run, interleaved. A third row is the hello Worker handing each
 * socket to a Durable Object that accepts it hibernatable and sends one message, which
 * separates what workerd's DO sockets cost from what Toolwire adds.
 *
 * Per row: time to first state (the first `tool_update`, or the hello message) p50 and
 * p99 as the clients saw it (bench/ws-swarm.ts, its own process), the CPU seconds the
 * server's `wrangler dev` group spent until the last first state, and workerd's
 * resident memory per subscriber (its RSS with all sockets open, less before). The
 * running call prints a line every 100 ms, so its publications reach the sockets
 * already open while the rest connect; `later updates` says they kept arriving.
 *
 * Loopback only, bounded: BENCH_SUBSCRIBERS (default 1000) sockets, BENCH_SUBSCRIBER_ROUNDS
 * (default 2) rounds, 60 s per swarm at most. BENCH_BEFORE=<another checkout> adds that
 * checkout's stack as one more row, interleaved (before/after); BENCH_QUIET=1 a row for a
 * running call that prints nothing while the sockets connect (no publication fan-out).
 * Not part of `npm test`:
 * `npm run bench -- subscribers`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { ToolwireClient } from "../src/client/index.ts";
import {
  freePort,
  HOST,
  ROOT,
  startWranglerDev,
  stopGroup,
  waitUntilUp,
} from "../test/support/processes.ts";
import { largestRssOf, usageOf } from "./process-group.ts";
import { load, median } from "./run-stats.ts";
import { type Stack, startStack } from "./stack.ts";

const COUNT = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const ROUNDS = Number(process.env.BENCH_SUBSCRIBER_ROUNDS ?? 2);
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
}

interface Row {
  swarm: Swarm;
  cpu: number;
  rssPerSubscriber: number;
  laterUpdates: number;
}

/** `wrangler dev` of the hello Worker, on free loopback ports; resolves once it answers. */
async function startHello(): Promise<{ url: string; pgid: number; stop: () => Promise<void> }> {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-bench-hello-"));
  const hello = startWranglerDev({
    config: path.join(ROOT, "bench/hello-ws/wrangler.toml"),
    port,
    inspectorPort,
    persistTo: state,
    vars: {},
  });
  const url = `http://${HOST}:${port}`;
  const stop = async () => {
    await stopGroup(hello.child);
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await waitUntilUp(url, hello);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pgid: hello.child.pid!, stop };
}

/** Opens the swarm, measures the server group while it connects and while it is held. */
async function swarm(url: string, until: string, pgid: number): Promise<Row> {
  const rss0 = largestRssOf(pgid);
  const cpu0 = usageOf(pgid).cpu;
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
  await new Promise((r) => setTimeout(r, 2000));
  const rss = largestRssOf(pgid);
  child.stdin!.write("close\n");
  const held = (await next("HELD")) as { laterUpdates: number };
  await new Promise((r) => child.once("exit", r));
  await new Promise((r) => setTimeout(r, 3000)); // let the server close them
  return {
    swarm: result,
    cpu,
    rssPerSubscriber: (rss - rss0) / COUNT,
    laterUpdates: held.laterUpdates,
  };
}

function line(name: string, rows: Row[], floor: number): string {
  const m = (f: (r: Row) => number) => median(rows.map(f));
  const p99 = m((r) => r.swarm.p99Ms);
  const got = rows.map((r) => `${r.swarm.gotFirst}/${r.swarm.count}`).join(", ");
  return `| ${name} | ${m((r) => r.swarm.p50Ms).toFixed(0)} | ${p99.toFixed(0)} | ${(p99 / floor).toFixed(2)}× | ${m((r) => r.cpu).toFixed(2)} | ${(m((r) => r.rssPerSubscriber) / 1024).toFixed(1)} | ${got} | ${m((r) => r.laterUpdates)} |`;
}

/** 1,000 subscribers to a running bash call of `stack`, with the call cancelled after. */
async function toolwire(stack: Stack, command = RUNNING): Promise<Row> {
  const api = new ToolwireClient({ baseUrl: stack.apiUrl, token: stack.apiToken });
  const call = await api.createInvocation({ tool: "bash", args: { command } });
  await new Promise((r) => setTimeout(r, 1000));
  // socketUrl carries the subscribe token already.
  const row = await swarm(call.socketUrl, "tool_update", stack.pgid);
  await api.cancel(call.id);
  return row;
}

export default async function bench(): Promise<void> {
  const stacks: Stack[] = [];
  let hello: Awaited<ReturnType<typeof startHello>> | null = null;
  try {
    const after = await startStack();
    stacks.push(after);
    const before = process.env.BENCH_BEFORE ? await startStack(process.env.BENCH_BEFORE) : null;
    if (before) stacks.push(before);
    hello = await startHello();
    const helloWs = hello.url.replace(/^http/, "ws");
    const rows = {
      worker: [] as Row[],
      object: [] as Row[],
      toolwire: [] as Row[],
      before: [] as Row[],
      quiet: [] as Row[],
    };
    console.log(
      `${COUNT} WebSockets opened at once (bench/ws-swarm.ts, own process), ${ROUNDS} interleaved rounds, medians; load average at start ${load()}`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      rows.worker.push(await swarm(helloWs, "any", hello.pgid));
      rows.object.push(await swarm(`${helloWs}/do`, "any", hello.pgid));
      if (before) rows.before.push(await toolwire(before));
      rows.toolwire.push(await toolwire(after));
      if (process.env.BENCH_QUIET) rows.quiet.push(await toolwire(after, QUIET));
    }
    const floor = median(rows.worker.map((r) => r.swarm.p99Ms));
    console.log("");
    console.log(
      "| server | first state p50 ms | p99 ms | p99 vs hello Worker | server CPU s | workerd RSS KiB per subscriber | first states | later updates |",
    );
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    console.log(line("hello Worker (the floor)", rows.worker, floor));
    console.log(line("hello Worker → DO (hibernatable)", rows.object, floor));
    if (before)
      console.log(
        line(
          `Toolwire before (${process.env.BENCH_BEFORE}), running bash call`,
          rows.before,
          floor,
        ),
      );
    console.log(line("Toolwire, running bash call", rows.toolwire, floor));
    if (rows.quiet.length > 0) {
      console.log(line("Toolwire, running call that prints nothing more", rows.quiet, floor));
    }
    console.log("");
    console.log(`Load average at the end ${load()}`);
  } finally {
    await hello?.stop();
    for (const stack of stacks) await stack.stop();
  }
}
