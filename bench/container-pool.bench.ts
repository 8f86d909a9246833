/**
 * Create to first output on the container backend (issue 29, decision 230), pooled
 * against cold, in real local containers through the Worker of a real `wrangler dev`:
 * `POST /v1/sandboxes {backend: "container"}`, then bash `echo first`, until its result
 * is in hand, as ComputeSDK measures its providers. Pooled: a Worker with
 * `CONTAINER_POOL_SIZE=1` whose pool holds a started container; cold: the container
 * suite's Worker (pool size 0), which starts a container for the create. The two
 * alternate run by run, and each run waits until the pooled Worker's refill is done, so
 * no run competes with a container starting. A second `echo` after the first, outside
 * the total, says what a command costs once the sandbox is warm. Each sandbox is deleted
 * after its run, outside the timing. `BENCH_POOL_RUNS` runs each (default 20), stopping early after
 * `BENCH_POOL_MINUTES` (default 10): containers are slow to start on a shared machine.
 * `PATH=$PWD/node_modules/.bin:$PATH node bench/run.ts container-pool` (needs Docker).
 */
import { startContainersWorker } from "../test/containers/global-setup.ts";
import { type Api, echo, request } from "./bench-api.ts";
import { runGlobalSetup } from "./global-setup.ts";
import { load, median, PUBLISHED, percentile } from "./run-stats.ts";

const RUNS = Number(process.env.BENCH_POOL_RUNS ?? 20);
const MINUTES = Number(process.env.BENCH_POOL_MINUTES ?? 10);

interface Run {
  /** Create to first output. */
  total: number;
  /** The create's part. */
  create: number;
  /** A second `echo` after the first, outside the total: what a command costs once warm. */
  next: number;
  fromPool: boolean;
}

/** One create to first output, and whether its container came from the pool. */
async function once(api: Api): Promise<Run> {
  const started = performance.now();
  const view = (await request(api, "POST", "/v1/sandboxes", { backend: "container" })) as {
    id: string;
    fromPool: boolean;
  };
  const create = performance.now() - started;
  await echo(api, view.id);
  const total = performance.now() - started;
  const nextStarted = performance.now();
  await echo(api, view.id);
  const next = performance.now() - nextStarted;
  await request(api, "DELETE", `/v1/sandboxes/${view.id}`);
  return { total, create, next, fromPool: view.fromPool };
}

/** Waits until the pool holds its size of started containers and starts none. */
async function poolFull(api: Api): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const pool = (await request(api, "GET", "/v1/sandboxes/pool")) as {
      size: number;
      ready: number;
      starting: number;
    };
    if (pool.ready === pool.size && pool.starting === 0) return;
    if (Date.now() > deadline) throw new Error(`the pool did not fill: ${JSON.stringify(pool)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const ms = (x: number) => `${x.toFixed(0)} ms`;

export default async function containerPoolBench(): Promise<void> {
  const { provided, stop } = await runGlobalSetup("test/containers/global-setup.ts");
  if (provided.containersMissing) {
    console.log(`container pool not measured: ${provided.containersMissing}`);
    await stop();
    return;
  }
  const cold: Api = { url: provided.containersApiUrl!, token: provided.containersApiToken! };
  const pooledWorker = await startContainersWorker({ CONTAINER_POOL_SIZE: "1" });
  const pooled: Api = pooledWorker;
  const times = { pooled: [] as Run[], cold: [] as Run[] };
  const loads: string[] = [load()];
  let missed = 0;
  const failed: string[] = [];
  const until = Date.now() + MINUTES * 60_000;
  try {
    for (let run = 0; run < RUNS && Date.now() < until; run++) {
      // The order alternates, so neither side always follows the other's delete.
      for (const side of run % 2 ? (["cold", "pooled"] as const) : (["pooled", "cold"] as const)) {
        await poolFull(pooled);
        // Another session's test clean-up may remove this machine's containers mid-run.
        const r = await once(side === "pooled" ? pooled : cold).catch((err: unknown) => {
          failed.push(`${side}: ${String(err).slice(0, 300)}`);
          return null;
        });
        if (r && side === "pooled" && !r.fromPool) missed++;
        else if (r) times[side].push(r);
      }
      loads.push(load());
    }
  } finally {
    await pooledWorker.stop();
    await stop();
  }
  console.log(
    `create {backend: "container"}, then bash \`echo first\`, to its result, interleaved: ${times.pooled.length} pooled runs, ${times.cold.length} cold${missed ? `; ${missed} pooled runs found the pool empty and are left out` : ""}`,
  );
  for (const f of failed) console.log(`a run failed and is left out: ${f}`);
  console.log(`load average (1/5/15 min) at the start, then after each pair: ${loads.join("; ")}`);
  console.log(
    "| container sandbox | median | p95 | the create's part (median / p95) | a next echo, not counted (median) |",
  );
  console.log("|---|---:|---:|---:|---:|");
  const totals = { pooled: times.pooled.map((r) => r.total), cold: times.cold.map((r) => r.total) };
  for (const side of ["pooled", "cold"] as const) {
    const creates = times[side].map((r) => r.create);
    console.log(
      `| ${side} | ${ms(median(totals[side]))} | ${ms(percentile(totals[side], 95))} | ${ms(median(creates))} / ${ms(percentile(creates, 95))} | ${ms(median(times[side].map((r) => r.next)))} |`,
    );
  }
  for (const [name, med, p95] of PUBLISHED) {
    console.log(`| ${name} (published) | ${med * 1000} ms | ${p95 * 1000} ms | | |`);
  }
  const ratio = (f: (xs: number[]) => number) => (f(totals.cold) / f(totals.pooled)).toFixed(1);
  console.log(`cold / pooled: median ${ratio(median)}x, p95 ${ratio((xs) => percentile(xs, 95))}x`);
}
