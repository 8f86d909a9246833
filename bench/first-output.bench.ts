/**
 * Create to first output on the host backend (issue 29), measured as ComputeSDK measures
 * its providers: create a sandbox, run `echo` in it, until the result is in hand; all
 * through the Worker of a real `wrangler dev` and a real sandbox host (the e2e stack,
 * loop-mounted disks as root). Two ways: `POST /v1/sandboxes` then the call (two
 * requests, as an SDK does), and one call that names `"sandbox": "new"` with a fresh
 * `runId` (decision 221). 100 runs each (`BENCH_FIRST_OUTPUT_RUNS`), one at a time;
 * each sandbox is deleted after its run, outside the timing. Median, p95 and p99 beside
 * the published figures. `PATH=$PWD/node_modules/.bin:$PATH node bench/run.ts first-output`
 */
import { runGlobalSetup } from "./global-setup.ts";
import { load, median } from "./run-stats.ts";

const RUNS = Number(process.env.BENCH_FIRST_OUTPUT_RUNS ?? 100);

/** ComputeSDK benchmarks, 2026-04, 100 runs, create to first command: median / p95 seconds. */
const PUBLISHED: [string, number, number][] = [
  ["Daytona", 0.11, 0.28],
  ["E2B", 0.44, 0.85],
  ["Cloudflare Sandbox", 1.72, 2.48],
  ["Vercel", 1.75, 1.93],
  ["Modal", 2.66, 11.78],
];

interface Api {
  url: string;
  token: string;
}

let calls = 0;

async function request(api: Api, method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${api.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Runs `echo` (in `sandbox`, or "new" for `runId`'s own) until its result; answers the sandbox used. */
async function echo(api: Api, sandbox: string, runId?: string): Promise<string> {
  const toolCallId = `bench_fo_${process.pid}_${++calls}`;
  const made = (await request(api, "POST", "/v1/invocations", {
    tool: "bash",
    args: { command: "echo first" },
    sandbox,
    toolCallId,
    ...(runId ? { runId } : {}),
  })) as { sandbox?: string };
  for (;;) {
    const res = await fetch(`${api.url}/v1/invocations/${toolCallId}/result?wait=30`, {
      headers: { authorization: `Bearer ${api.token}` },
    });
    const text = await res.text();
    if (res.status === 200) {
      if (!text.includes("first")) throw new Error(`echo answered ${text}`);
      return made.sandbox ?? sandbox;
    }
    if (res.status !== 202) throw new Error(`result: ${res.status} ${text}`);
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measure(api: Api, way: "create, then call" | '"sandbox": "new"'): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    let sandbox: string;
    if (way === "create, then call") {
      const view = (await request(api, "POST", "/v1/sandboxes", {})) as { id: string };
      sandbox = await echo(api, view.id);
    } else sandbox = await echo(api, "new", `bench-fo-${process.pid}-${i}`);
    times.push(performance.now() - started);
    await request(api, "DELETE", `/v1/sandboxes/${sandbox}`);
  }
  return times;
}

export default async function firstOutput(): Promise<void> {
  const { provided, stop } = await runGlobalSetup("test/e2e/global-setup.ts");
  const api = { url: provided.apiUrl!, token: provided.apiToken! };
  try {
    // Warm the Worker and the host once (the first request compiles the Worker's code).
    await echo(api, "default");
    console.log(`${RUNS} runs each, one at a time; load before: ${load()}\n`);
    console.log("| way | median | p95 | p99 |");
    console.log("| --- | ---: | ---: | ---: |");
    for (const way of ["create, then call", '"sandbox": "new"'] as const) {
      const times = await measure(api, way);
      const ms = (v: number) => `${Math.round(v)} ms`;
      console.log(
        `| Toolwire host backend, ${way} | ${ms(median(times))} | ${ms(percentile(times, 95))} | ${ms(percentile(times, 99))} |`,
      );
    }
    for (const [name, med, p95] of PUBLISHED) {
      console.log(`| ${name} (published) | ${med * 1000} ms | ${p95 * 1000} ms | — |`);
    }
    console.log(`\nload after: ${load()}`);
  } finally {
    await stop();
  }
}
