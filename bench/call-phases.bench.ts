/**
 * Where create to first output goes through the Worker, on one stack at a time (issue
 * 29): `POST /v1/sandboxes`, then `POST /v1/invocations?wait=30` with `echo first`
 * (which answers the result when it settles in time; else `GET …/result?wait=30`
 * follows), each timed. This checkout's stack and `BENCH_BEFORE`'s take
 * turns, one stack up at a time, so that neither competes with the other for the two
 * cores (first-output.bench.ts runs both at once). Per turn: `BENCH_PHASES_RUNS` (20)
 * runs after 5 to warm up, medians. Then the median of the turns' medians per side, and
 * the ratio against this checkout, and the p95 of every run's total (the aim's second
 * figure). `BENCH_PHASES_TURNS` (2) turns of each.
 * `BENCH_BEFORE=/tmp/tw-before node bench/run.ts call-phases` (as root).
 */
import { request } from "./bench-api.ts";
import { load, median, percentile } from "./run-stats.ts";
import { startStack } from "./stack.ts";

const RUNS = Number(process.env.BENCH_PHASES_RUNS ?? 20);
const TURNS = Number(process.env.BENCH_PHASES_TURNS ?? 2);
const WARM_UP = 5;

interface Phases {
  create: number;
  post: number;
  result: number;
  total: number;
}

let calls = 0;

/** One stack's turn: the medians of each phase over `RUNS` runs, and every run's total. */
async function turn(root: string | undefined): Promise<{ medians: Phases; totals: number[] }> {
  const stack = await startStack(root);
  const api = { url: stack.apiUrl, token: stack.apiToken };
  const runs: Phases[] = [];
  try {
    for (let i = 0; i < WARM_UP + RUNS; i++) {
      const t0 = performance.now();
      const view = (await request(api, "POST", "/v1/sandboxes", {})) as { id: string };
      const t1 = performance.now();
      const toolCallId = `bench_phases_${process.pid}_${++calls}`;
      const made = (await request(api, "POST", "/v1/invocations?wait=30", {
        tool: "bash",
        args: { command: "echo first" },
        sandbox: view.id,
        toolCallId,
      })) as { status: string; result?: unknown };
      const t2 = performance.now();
      const settled = made.status === "settled" && JSON.stringify(made.result).includes("first");
      while (!settled) {
        const res = await fetch(`${api.url}/v1/invocations/${toolCallId}/result?wait=30`, {
          headers: { authorization: `Bearer ${api.token}` },
        });
        const text = await res.text();
        if (res.status === 200 && text.includes("first")) break;
        if (res.status !== 202) throw new Error(`result: ${res.status} ${text}`);
      }
      const t3 = performance.now();
      await request(api, "DELETE", `/v1/sandboxes/${view.id}`);
      if (i >= WARM_UP)
        runs.push({ create: t1 - t0, post: t2 - t1, result: t3 - t2, total: t3 - t0 });
    }
  } finally {
    await stack.stop();
  }
  return { medians: mediansOf(runs), totals: runs.map((r) => r.total) };
}

function mediansOf(rows: Phases[]): Phases {
  return {
    create: median(rows.map((r) => r.create)),
    post: median(rows.map((r) => r.post)),
    result: median(rows.map((r) => r.result)),
    total: median(rows.map((r) => r.total)),
  };
}

export default async function callPhases(): Promise<void> {
  const before = process.env.BENCH_BEFORE;
  const sides: [string, string | undefined][] = [["this checkout", undefined]];
  if (before) sides.push([`before (${before})`, before]);
  console.log(
    `${TURNS} turns of each side, one stack up at a time, ${RUNS} runs a turn; load before: ${load()}\n`,
  );
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log("| turn | side | create | the call's POST | its result | total |");
  console.log("| --- | --- | ---: | ---: | ---: | ---: |");
  const turns = new Map<string, Phases[]>(sides.map(([name]) => [name, []]));
  const totals = new Map<string, number[]>(sides.map(([name]) => [name, []]));
  for (let t = 0; t < TURNS; t++) {
    const order = t % 2 === 0 ? sides : [...sides].reverse();
    for (const [name, root] of order) {
      const { medians: p, totals: each } = await turn(root);
      turns.get(name)!.push(p);
      totals.get(name)!.push(...each);
      console.log(
        `| ${t + 1} | ${name} | ${ms(p.create)} | ${ms(p.post)} | ${ms(p.result)} | ${ms(p.total)} |`,
      );
    }
  }
  const ours = mediansOf(turns.get("this checkout")!);
  console.log(
    "\n| side | total, median of the turns | × this checkout | p95 of every run |\n| --- | ---: | ---: | ---: |",
  );
  for (const [name] of sides) {
    const total = mediansOf(turns.get(name)!).total;
    const p95 = percentile(totals.get(name)!, 95);
    console.log(`| ${name} | ${ms(total)} | ${(total / ours.total).toFixed(2)} | ${ms(p95)} |`);
  }
  console.log("| aim (issue 29) | 100.0 ms | | 250.0 ms |");
  console.log(`\nload after: ${load()}`);
}
