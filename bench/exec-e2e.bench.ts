/**
 * End to end through the API (issue 10, "The spill at disk speed"): a `bash` invocation
 * of `yes | head -c N` created on the real Worker (`wrangler dev`) with a real sandbox
 * host, started exactly as the e2e tests start them (test/e2e/global-setup.ts), timed
 * from `POST /v1/invocations` until the long-poll for its result returns it settled,
 * against the same command writing into a file itself (`sh -c '(cmd) > file'`), in the
 * same run, interleaved. Each invocation's result is checked: exit 0, exact totals, and
 * the spill file's size. `true` through the API is timed too: what every invocation costs
 * (the Worker, the Durable Object, the host's jail), whatever it prints.
 *
 * BENCH_E2E_BYTES overrides the size (default 4e8), BENCH_E2E_RUNS the number of runs
 * (default 3). Not part of `npm test`: `npm run bench -- exec-e2e`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ToolwireClient } from "../src/client/index.ts";
import setup from "../test/e2e/global-setup.ts";
import { load, median } from "./run-stats.ts";

const BYTES = Number(process.env.BENCH_E2E_BYTES ?? 4e8);
const RUNS = Number(process.env.BENCH_E2E_RUNS ?? 3);
const COMMAND = `yes | head -c ${BYTES}`;

/** What global-setup provides to the tests, collected here instead. */
type Provided = Record<string, string>;

async function intoFile(dir: string): Promise<number> {
  const file = path.join(dir, "direct.out");
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", `(${COMMAND}) > ${file}`], { stdio: "ignore" });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
  const seconds = (performance.now() - start) / 1000;
  if (statSync(file).size !== BYTES) throw new Error(`${file} has the wrong size`);
  rmSync(file);
  return seconds;
}

/** Seconds from creating a bash invocation of `command` until its result is settled. */
async function settle(api: ToolwireClient, command: string) {
  const start = performance.now();
  const created = await api.createInvocation({ tool: "bash", args: { command } });
  let poll = await api.result(created.id, { wait: 30 });
  while (poll.status !== "settled") poll = await api.result(created.id, { wait: 30 });
  return { id: created.id, seconds: (performance.now() - start) / 1000, result: poll.result };
}

/** What any invocation costs, whatever it prints: `true` through the API. */
async function fixedCost(api: ToolwireClient): Promise<number> {
  const { id, seconds, result } = await settle(api, "true");
  if (result.isError) throw new Error(`invocation ${id} (true) failed`);
  return seconds;
}

async function throughApi(api: ToolwireClient, sandboxRoot: string): Promise<number> {
  const { id, seconds, result } = await settle(api, COMMAND);
  const t = result.truncation;
  if (result.isError || t.totalBytes !== BYTES || t.totalLines !== BYTES / 2 || !t.spillPath) {
    throw new Error(`invocation ${id} did not end as expected: ${JSON.stringify(t)}`);
  }
  // `/toolwire/spill/<id>.log` is, on the host, in SANDBOX_SPILL_DIR's default (decision 160).
  const spill = path.join(`${sandboxRoot}.spill`, path.basename(t.spillPath));
  if (statSync(spill).size !== BYTES) throw new Error(`${spill} has the wrong size`);
  rmSync(spill);
  return seconds;
}

export default async function bench(): Promise<void> {
  const provided: Provided = {};
  const project = {
    provide: (key: string, value: string) => {
      provided[key] = value;
    },
  } as unknown as TestProject;
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-bench-e2e-"));
  const teardown = await setup(project);
  try {
    const api = new ToolwireClient({ baseUrl: provided.apiUrl!, token: provided.apiToken! });
    console.log(
      `\`${COMMAND}\` as a bash invocation through the Worker (wrangler dev) and the sandbox host, until its result; medians of ${RUNS} interleaved runs after one warm-up; load average at start ${load()}`,
    );
    await throughApi(api, provided.sandboxRoot!);
    const direct: number[] = [];
    const api2: number[] = [];
    const fixed: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      direct.push(await intoFile(dir));
      api2.push(await throughApi(api, provided.sandboxRoot!));
      fixed.push(await fixedCost(api));
    }
    const d = median(direct);
    const a = median(api2);
    console.log("");
    console.log(
      "| command | `cmd > file` s | through the API s | API vs `cmd > file` (aim ≥0.9) | runs (API) | `true` through the API s |",
    );
    console.log("| --- | ---: | ---: | ---: | --- | ---: |");
    console.log(
      `| \`${COMMAND.replace("|", "\\|")}\` | ${d.toFixed(2)} | ${a.toFixed(2)} | ${(d / a).toFixed(2)}× | ${api2.map((s) => s.toFixed(2)).join(", ")} | ${median(fixed).toFixed(2)} |`,
    );
    console.log("");
    console.log(`Load average at the end ${load()}`);
  } finally {
    await teardown();
    rmSync(dir, { recursive: true, force: true });
  }
}
