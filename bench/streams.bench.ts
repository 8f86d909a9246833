/**
 * Durable Streams (issue 27) on the local stack (bench/stack.ts: a sandbox host and
 * `wrangler dev`, as the e2e tests run them):
 * - a 400 MB bash output read from start to end through `/stream`, against `/spill` and
 *   against `cat` of the spill file (ratios; aim ≥ 0.9× of `/spill`);
 * - 200 SSE readers of one live call: time to the last byte after the command ends
 *   (p50/p99) and the CPU of the Worker's process group;
 * - a producer's appends with `Producer-Seq` (1 KB each, one after another) against the
 *   reference server (`@durable-streams/server`) on the same machine.
 * The machine is shared: times move with the load. Run: node bench/run.ts streams
 */
import { spawnSync } from "node:child_process";
import { DurableStreamTestServer } from "@durable-streams/server";
import { usageOf } from "./process-group.ts";
import { load, median } from "./run-stats.ts";
import { startStack } from "./stack.ts";

const RUNS = Number(process.env.BENCH_STREAMS_RUNS ?? 3);
const READERS = Number(process.env.BENCH_STREAMS_READERS ?? 200);
const APPENDS = Number(process.env.BENCH_STREAMS_APPENDS ?? 500);

async function drain(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
    bytes += chunk.byteLength;
  return bytes;
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await run();
  return { ms: performance.now() - started, value };
}

async function call(apiUrl: string, auth: Record<string, string>, body: unknown): Promise<string> {
  const res = await fetch(`${apiUrl}/v1/invocations`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const created = (await res.json()) as { id: string };
  return created.id;
}

async function settled(apiUrl: string, auth: Record<string, string>, id: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${apiUrl}/v1/invocations/${id}/result?wait=30`, { headers: auth });
    if (res.status === 200) return;
    await res.body?.cancel();
  }
}

/** Reads an SSE answer to its end; answers when its last byte came. */
async function sseToEnd(url: string, auth: Record<string, string>): Promise<number> {
  const res = await fetch(url, { headers: auth });
  let last = performance.now();
  for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>) last = performance.now();
  return last;
}

async function appendRate(url: string, headers: Record<string, string>): Promise<number> {
  const put = await fetch(url, {
    method: "PUT",
    headers: { ...headers, "Content-Type": "text/plain" },
  });
  if (put.status !== 201) throw new Error(`PUT ${url}: ${put.status}`);
  const body = `${"x".repeat(1023)}\n`;
  const started = performance.now();
  for (let seq = 0; seq < APPENDS; seq++) {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        ...headers,
        "Content-Type": "text/plain",
        "Producer-Id": "bench",
        "Producer-Epoch": "0",
        "Producer-Seq": String(seq),
      },
      body,
    });
    if (res.status !== 200) throw new Error(`append ${seq}: ${res.status}`);
    await res.body?.cancel();
  }
  return APPENDS / ((performance.now() - started) / 1000);
}

/** The same appends through Toolwire's own producer API (`POST /v1/invocations/:id/output` with `seq`). */
async function producerApiRate(apiUrl: string, auth: Record<string, string>): Promise<number> {
  const id = await call(apiUrl, auth, { tool: "external", args: { name: "bench" } });
  const write = `${"x".repeat(1023)}\n`;
  const started = performance.now();
  for (let seq = 0; seq < APPENDS; seq++) {
    const res = await fetch(`${apiUrl}/v1/invocations/${id}/output`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ calls: [{ write }], seq }),
    });
    if (res.status !== 200) throw new Error(`output ${seq}: ${res.status}`);
    await res.body?.cancel();
  }
  return APPENDS / ((performance.now() - started) / 1000);
}

export default async function main(): Promise<void> {
  console.log(`runs ${RUNS}, readers ${READERS}, appends ${APPENDS}; ${load()}`);
  const stack = await startStack();
  const auth = { Authorization: `Bearer ${stack.apiToken}` };
  const { apiUrl } = stack;
  try {
    // 1. 400 MB from start to end.
    const id = await call(apiUrl, auth, {
      tool: "bash",
      args: { command: "yes 'a line of output, forty bytes long...' | head -c 400000000" },
    });
    await settled(apiUrl, auth, id);
    const view = (await (
      await fetch(`${apiUrl}/v1/invocations/${id}`, { headers: auth })
    ).json()) as {
      state: { truncation: { spillPath?: string } };
    };
    const rows: Record<string, number[]> = { stream: [], spill: [], cat: [] };
    const spillFile = spillFileOf(stack.sandboxRoot, view.state.truncation.spillPath);
    for (let run = 0; run < RUNS; run++) {
      const s = await timed(() => drain(`${apiUrl}/v1/invocations/${id}/stream?offset=-1`, auth));
      const p = await timed(() => drain(`${apiUrl}/v1/invocations/${id}/spill`, auth));
      if (s.value !== 400_000_000 || p.value !== 400_000_000) {
        throw new Error(`read ${s.value} / ${p.value} bytes, not 400,000,000`);
      }
      rows.stream?.push(s.ms);
      rows.spill?.push(p.ms);
      if (spillFile) {
        const started = performance.now();
        spawnSync("sh", ["-c", `cat '${spillFile}' > /dev/null`]);
        rows.cat?.push(performance.now() - started);
      }
    }
    const [stream, spill, cat] = [
      median(rows.stream ?? []),
      median(rows.spill ?? []),
      median(rows.cat ?? []),
    ];
    console.log("\n| 400 MB read start to end | median ms | MB/s | /stream is |");
    console.log("|---|---:|---:|---:|");
    console.log(
      `| /stream?offset=-1 | ${stream.toFixed(0)} | ${(400_000 / stream).toFixed(0)} | — |`,
    );
    console.log(
      `| /spill | ${spill.toFixed(0)} | ${(400_000 / spill).toFixed(0)} | ${(spill / stream).toFixed(2)}× of /spill |`,
    );
    if (spillFile) {
      console.log(
        `| cat of the file | ${cat.toFixed(0)} | ${(400_000 / cat).toFixed(0)} | ${(cat / stream).toFixed(2)}× of cat |`,
      );
    }

    // 2. 200 SSE readers of one live call.
    const live = await call(apiUrl, auth, {
      tool: "bash",
      args: { command: 'for i in $(seq 1 30); do echo "tick $i"; sleep 0.1; done' },
    });
    const cpu0 = usageOf(stack.pgid).cpu;
    const url = `${apiUrl}/v1/invocations/${live}/stream?offset=-1&live=sse`;
    const readers = Array.from({ length: READERS }, () => sseToEnd(url, auth));
    await settled(apiUrl, auth, live);
    const ended = performance.now();
    const lasts = await Promise.all(readers);
    const cpu = usageOf(stack.pgid).cpu - cpu0;
    const after = lasts.map((t) => Math.max(0, t - ended)).sort((a, b) => a - b);
    const p = (q: number) => after[Math.min(after.length - 1, Math.floor(q * after.length))] ?? 0;
    console.log(`\n| ${READERS} SSE readers of one live call | p50 ms | p99 ms | Worker CPU s |`);
    console.log("|---|---:|---:|---:|");
    console.log(
      `| last byte after the result | ${p(0.5).toFixed(0)} | ${p(0.99).toFixed(0)} | ${cpu.toFixed(2)} |`,
    );

    // 3. A producer's appends, against the reference server.
    const reference = new DurableStreamTestServer({ port: 0, host: "127.0.0.1" });
    const referenceUrl = await reference.start();
    try {
      const ours = await appendRate(`${apiUrl}/v1/stream/bench-${Date.now()}`, auth);
      const theirs = await appendRate(`${referenceUrl}/v1/stream/bench-${Date.now()}`, {});
      const producerApi = await producerApiRate(apiUrl, auth);
      console.log(
        `\n| ${APPENDS} appends of 1 KB with Producer-Seq, one at a time | appends/s | ratio |`,
      );
      console.log("|---|---:|---:|");
      console.log(`| Toolwire /v1/stream | ${ours.toFixed(0)} | ${(ours / theirs).toFixed(2)}× |`);
      console.log(`| reference server 0.3.7 (in process) | ${theirs.toFixed(0)} | 1 |`);
      console.log(
        `| Toolwire's producer API (/output with seq), same stack | ${producerApi.toFixed(0)} | ${(producerApi / theirs).toFixed(2)}× |`,
      );
    } finally {
      await reference.stop();
    }
  } finally {
    await stack.stop();
  }
}

/** The spill file on this machine: in the sandbox root's `.spill` sibling, by its name. */
function spillFileOf(sandboxRoot: string, jailPath: string | undefined): string | null {
  if (!jailPath) return null;
  return `${sandboxRoot}.spill/${jailPath.split("/").pop()}`;
}
