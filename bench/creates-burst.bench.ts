/**
 * Fifty creates at once through the Worker (issue 29): 50 `POST /v1/sandboxes` sent
 * together to a real `wrangler dev` and sandbox host (the e2e stack, as root: loop-mounted
 * disks and network namespaces), p50 and p99 of each round. The named alternative runs
 * on the same stack, its rounds alternating with the Worker's: the same 50 creates sent
 * straight to the sandbox host's own route (what bench/sandboxes.bench.ts measures in
 * process), so the Worker's share shows. Two stacks, one up at a time: the default pool,
 * and a pool as large as the burst (`SANDBOX_POOL_SIZE=50`). Each round's sandboxes are
 * deleted after it, outside the timing, and the next round waits `SETTLE_MS` for the pool
 * to refill. `BENCH_BURST_ROUNDS` rounds each (default 3).
 * `PATH=$PWD/node_modules/.bin:$PATH node bench/run.ts creates-burst` (as root).
 */
import { newSandboxId } from "../src/protocol/index.ts";
import { type Api, request } from "./bench-api.ts";
import { load, median, percentile } from "./run-stats.ts";
import { type Stack, startStackWithPool } from "./stack.ts";

const AT_ONCE = 50;
const ROUNDS = Number(process.env.BENCH_BURST_ROUNDS ?? 3);
/** Long enough for a pool of 50 to be made again on two cores. */
const SETTLE_MS = 8_000;

type Route = "through the Worker" | "the host's own route";

/** One burst: every create's time, then each sandbox deleted. */
async function burst(stack: Stack, route: Route): Promise<number[]> {
  const worker: Api = { url: stack.apiUrl, token: stack.apiToken };
  const host: Api = { url: stack.sandboxUrl, token: stack.sandboxToken };
  const api = route === "through the Worker" ? worker : host;
  const times: number[] = [];
  const ids = await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      const body = route === "through the Worker" ? {} : { id: newSandboxId("default") };
      const started = performance.now();
      const made = (await request(api, "POST", "/v1/sandboxes", body)) as { id: string };
      times.push(performance.now() - started);
      return made.id;
    }),
  );
  await Promise.all(ids.map((id) => request(api, "DELETE", `/v1/sandboxes/${id}`)));
  return times;
}

export default async function createsBurst(): Promise<void> {
  console.log(
    `${AT_ONCE} creates at once, ${ROUNDS} rounds each way, alternating; load before: ${load()}\n`,
  );
  console.log("| pool | route | p50 per round | p99 per round | p99, median of the rounds |");
  console.log("| --- | --- | ---: | ---: | ---: |");
  for (const [pool, size] of [
    ["the default (4)", undefined],
    ["50", "50"],
  ] as const) {
    const stack = await startStackWithPool(size);
    const rows = new Map<Route, { p50: number[]; p99: number[] }>();
    try {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      for (let round = 0; round < ROUNDS; round++) {
        const order: Route[] = ["through the Worker", "the host's own route"];
        if (round % 2 === 1) order.reverse();
        for (const route of order) {
          const times = await burst(stack, route);
          const row = rows.get(route) ?? { p50: [], p99: [] };
          row.p50.push(percentile(times, 50));
          row.p99.push(percentile(times, 99));
          rows.set(route, row);
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        }
      }
    } finally {
      await stack.stop();
    }
    const ms = (values: number[]) => values.map((v) => v.toFixed(0)).join(" / ");
    for (const [route, row] of rows) {
      console.log(
        `| ${pool} | ${route} | ${ms(row.p50)} ms | ${ms(row.p99)} ms | ${median(row.p99).toFixed(0)} ms |`,
      );
    }
  }
  console.log("| aim (issue 29) | | | | 1000 ms |");
  console.log(`\nload after: ${load()}`);
}
