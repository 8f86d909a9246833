/**
 * Create to first output on the host backend (issue 29), measured as ComputeSDK measures
 * its providers: create a sandbox, run `echo` in it, until the result is in hand; all
 * through the Worker of a real `wrangler dev` and a real sandbox host (the e2e stack,
 * loop-mounted disks and network namespaces as root). Three ways: `POST /v1/sandboxes`
 * then the call (two requests, as an SDK does); one call that names `"sandbox": "new"`
 * with a fresh `runId` (decision 221); and that call with `?wait=30`, whose answer
 * carries the result: one request from nothing to the output. 100 runs each
 * (`BENCH_FIRST_OUTPUT_RUNS`), one at a time; each sandbox is deleted after its run, outside the timing. Median, p95
 * and p99 beside the published figures, and for the two-request way the create and the
 * call apart (where the time goes).
 *
 * The named alternative runs in the same process, interleaved run by run (the order
 * alternating): a second stack from the checkout `BENCH_BEFORE` names, or, without it,
 * this checkout with nothing made ahead (`SANDBOX_POOL_SIZE=0`, decision 225).
 * `PATH=$PWD/node_modules/.bin:$PATH BENCH_BEFORE=/tmp/tw-before node bench/run.ts first-output`
 */

import { type Api, echo, request } from "./bench-api.ts";
import { load, median, PUBLISHED, percentile } from "./run-stats.ts";
import { type Stack, startStack, startStackWithPool } from "./stack.ts";

const RUNS = Number(process.env.BENCH_FIRST_OUTPUT_RUNS ?? 100);

const WAYS = ["create, then call", '"sandbox": "new"', '"sandbox": "new", ?wait=30'] as const;
type Way = (typeof WAYS)[number];

/** One run: its whole time and, for the two-request way, the create's part. */
async function once(api: Api, way: Way, run: number): Promise<{ total: number; create: number }> {
  const started = performance.now();
  let sandbox: string;
  let create = 0;
  if (way === "create, then call") {
    const view = (await request(api, "POST", "/v1/sandboxes", {})) as { id: string };
    create = performance.now() - started;
    sandbox = await echo(api, view.id);
  } else {
    const runId = `bench-fo-${process.pid}-${run}-${way.length}`;
    sandbox = await echo(api, "new", runId, way.endsWith("?wait=30"));
  }
  const total = performance.now() - started;
  await request(api, "DELETE", `/v1/sandboxes/${sandbox}`);
  return { total, create };
}

interface Side {
  name: string;
  api: Api;
  stack: Stack;
  times: Record<Way, { total: number; create: number }[]>;
}

/** The stack to compare against: `BENCH_BEFORE`'s checkout, or this one with nothing made ahead. */
async function startAlternative(): Promise<{ name: string; stack: Stack }> {
  const before = process.env.BENCH_BEFORE;
  if (before) return { name: `before (${before})`, stack: await startStack(before) };
  return {
    name: "nothing made ahead (SANDBOX_POOL_SIZE=0)",
    stack: await startStackWithPool("0"),
  };
}

export default async function firstOutput(): Promise<void> {
  const after = await startStack();
  let alternative: { name: string; stack: Stack } | null = null;
  const sides: Side[] = [];
  try {
    alternative = await startAlternative();
    for (const [name, stack] of [
      ["this checkout", after],
      [alternative.name, alternative.stack],
    ] as const) {
      const api = { url: stack.apiUrl, token: stack.apiToken };
      // Warm the Worker and the host once (the first request compiles the Worker's code).
      await echo(api, "default");
      sides.push({
        name,
        api,
        stack,
        times: { [WAYS[0]]: [], [WAYS[1]]: [], [WAYS[2]]: [] },
      });
    }
    // Let the made-ahead parts fill before the first run (a host that has been up a while).
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    console.log(`${RUNS} runs of each way on each side, interleaved; load before: ${load()}\n`);
    for (let i = 0; i < RUNS; i++) {
      for (const way of WAYS) {
        const order = i % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) side.times[way].push(await once(side.api, way, i));
      }
    }
    const ms = (v: number) => `${Math.round(v).toLocaleString("en")} ms`;
    console.log("| side | way | median | p95 | p99 | create's part (median / p95) |");
    console.log("| --- | --- | ---: | ---: | ---: | ---: |");
    for (const side of sides) {
      for (const way of WAYS) {
        const totals = side.times[way].map((t) => t.total);
        const creates = side.times[way].map((t) => t.create);
        const createPart =
          way === "create, then call"
            ? `${ms(median(creates))} / ${ms(percentile(creates, 95))}`
            : "—";
        console.log(
          `| ${side.name} | ${way} | ${ms(median(totals))} | ${ms(percentile(totals, 95))} | ${ms(percentile(totals, 99))} | ${createPart} |`,
        );
      }
    }
    for (const [name, med, p95] of PUBLISHED) {
      console.log(`| ${name} (published) | | ${med * 1000} ms | ${p95 * 1000} ms | — | |`);
    }
    console.log(`\nload after: ${load()}`);
  } finally {
    await Promise.all([after.stop(), alternative?.stack.stop()]);
  }
}
