/**
 * An MCP `tools/call` of bash with a `progressToken` (issue 16, "each byte once"),
 * through the real Worker (`wrangler dev`) and sandbox host that the e2e tests start
 * (test/e2e/global-setup.ts), with the official 2026-07-28 client SDK. Two commands:
 * `seq 1 1000000` (under a second of output, 6.9 MB), and the same million lines paced
 * over about 5 s, so that the call reads progress several times. Each is timed from the
 * call until its result, with the CPU seconds the `wrangler dev` process group (workerd)
 * spent meanwhile, against the same command created and long-polled through the HTTP
 * API (no progress reads), interleaved, in the same run.
 *
 * BENCH_MCP_RUNS sets the number of runs (default 3). BENCH_BEFORE=<another checkout>
 * runs the MCP calls against that checkout's stack too, interleaved (before/after). Not
 * part of `npm test`:
 * `npm run bench -- mcp-progress`.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ToolwireClient } from "../src/client/index.ts";
import { usageOf } from "./process-group.ts";
import { load, median } from "./run-stats.ts";
import { type Stack, startStack } from "./stack.ts";

const RUNS = Number(process.env.BENCH_MCP_RUNS ?? 3);
const COMMANDS = {
  "seq 1 1000000": "seq 1 1000000",
  "1,000,000 lines over 5 s":
    "for i in $(seq 0 9); do seq $((i*100000+1)) $((i*100000+100000)); sleep 0.5; done",
};

interface Sample {
  seconds: number;
  cpu: number;
  progress: number;
}

async function timed(pgid: number, work: () => Promise<number>): Promise<Sample> {
  const cpu0 = usageOf(pgid).cpu;
  const start = performance.now();
  const progress = await work();
  const seconds = (performance.now() - start) / 1000;
  return { seconds, cpu: usageOf(pgid).cpu - cpu0, progress };
}

/** One MCP call with progress; resolves to the number of notifications it got. */
async function overMcp(client: Client, command: string): Promise<number> {
  let notifications = 0;
  const result = await client.callTool(
    { name: "bash", arguments: { command } },
    { timeout: 120_000, onprogress: () => notifications++ },
  );
  const structured = result.structuredContent as { truncation?: { totalLines?: number } };
  if (result.isError || structured?.truncation?.totalLines !== 1_000_000) {
    throw new Error(`the MCP call of ${command} did not end as expected`);
  }
  return notifications;
}

async function overApi(api: ToolwireClient, command: string): Promise<number> {
  const created = await api.createInvocation({ tool: "bash", args: { command } });
  let poll = await api.result(created.id, { wait: 30 });
  while (poll.status !== "settled") poll = await api.result(created.id, { wait: 30 });
  if (poll.result.isError || poll.result.truncation.totalLines !== 1_000_000) {
    throw new Error(`the API call of ${command} did not end as expected`);
  }
  return 0;
}

function row(name: string, mcp: Sample[], api: Sample[]): string {
  const m = (xs: Sample[], k: keyof Sample) => median(xs.map((x) => x[k]));
  return `| ${name} | ${m(mcp, "seconds").toFixed(2)} | ${m(api, "seconds").toFixed(2)} | ${(m(mcp, "seconds") / m(api, "seconds")).toFixed(2)}× | ${m(mcp, "cpu").toFixed(2)} | ${m(api, "cpu").toFixed(2)} | ${m(mcp, "progress")} |`;
}

async function connect(stack: Stack): Promise<{ client: Client; api: ToolwireClient }> {
  const api = new ToolwireClient({ baseUrl: stack.apiUrl, token: stack.apiToken });
  const client = new Client(
    { name: "toolwire-bench", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.apiUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${stack.apiToken}` } },
    }),
  );
  return { client, api };
}

export default async function bench(): Promise<void> {
  const stacks: Stack[] = [];
  try {
    const after = await startStack();
    stacks.push(after);
    const before = process.env.BENCH_BEFORE ? await startStack(process.env.BENCH_BEFORE) : null;
    if (before) stacks.push(before);
    const targets = [
      ...(before ? [{ label: "before", stack: before, ...(await connect(before)) }] : []),
      { label: before ? "after" : "", stack: after, ...(await connect(after)) },
    ];
    console.log(
      `bash through /mcp (sdk 2.x, 2026-07-28, with a progressToken) vs the HTTP API (create + long-poll), medians of ${RUNS} interleaved runs after one warm-up each; CPU is the wrangler dev group's (workerd); load average at start ${load()}`,
    );
    console.log("");
    console.log(
      "| command | MCP s | API s | MCP vs API | MCP workerd CPU s | API workerd CPU s | progress notifications |",
    );
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const [name, command] of Object.entries(COMMANDS)) {
      const samples = targets.map(() => ({ mcp: [] as Sample[], api: [] as Sample[] }));
      for (const t of targets) {
        await overMcp(t.client, command);
        await overApi(t.api, command);
      }
      for (let run = 0; run < RUNS; run++) {
        for (const [i, t] of targets.entries()) {
          samples[i]!.mcp.push(await timed(t.stack.pgid, () => overMcp(t.client, command)));
          samples[i]!.api.push(await timed(t.stack.pgid, () => overApi(t.api, command)));
        }
      }
      for (const [i, t] of targets.entries()) {
        const label = t.label ? `\`${name}\`, ${t.label}` : `\`${name}\``;
        console.log(row(label, samples[i]!.mcp, samples[i]!.api));
      }
    }
    console.log("");
    console.log(`Load average at the end ${load()}`);
    for (const t of targets) await t.client.close();
  } finally {
    for (const stack of stacks) await stack.stop();
  }
}
