/**
 * Preview URLs (issue 25, decision 182) on the local stack (wrangler dev and a sandbox host,
 * as the e2e tests start them): 1,000 small requests one after another through a preview
 * URL (Worker → Sandbox DO → host → the way in → app), through the sandbox host's own preview
 * route (host → the way in → app, no Worker), and the host's `/healthz` (its own latency);
 * then 100 MiB through each, and from the same app run on the host's loopback with no
 * sandbox (direct). The app is test/support/preview-app.py in a created sandbox.
 * `node bench/run.ts preview` (as root: sandboxes need their network namespaces).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { runGlobalSetup } from "./global-setup.ts";

const REQUESTS = 1000;
const BIG_MIB = 100;
const ROUNDS = 3;
const APP = path.resolve(import.meta.dirname, "../test/support/preview-app.py");

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

async function latencies(url: string, headers: Record<string, string>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    times.push(performance.now() - t);
  }
  return times;
}

/** MiB/s of one 100 MiB download, the median of ROUNDS. */
async function throughput(url: string, headers: Record<string, string>): Promise<number> {
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    let bytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
      bytes += chunk.length;
    if (bytes !== BIG_MIB << 20) throw new Error(`${url}: ${bytes} bytes`);
    rates.push(BIG_MIB / ((performance.now() - t) / 1000));
  }
  return quantile(rates, 0.5);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export default async function previewBench(): Promise<void> {
  const { provided, stop } = await runGlobalSetup("test/e2e/global-setup.ts");
  const api = provided.apiUrl!;
  const hostUrl = provided.sandboxUrl!;
  const agent = {
    authorization: `Bearer ${provided.apiToken}`,
    "content-type": "application/json",
  };
  const hostAuth = { authorization: `Bearer ${provided.sandboxToken}` };
  const directPort = await freePort();
  const direct = spawn("python3", [APP, String(directPort), "."], { stdio: "ignore" });
  try {
    const created = await fetch(`${api}/v1/sandboxes`, {
      method: "POST",
      headers: agent,
      body: JSON.stringify({
        files: { "app.py": readFileSync(APP, "utf8"), "site/index.html": "ok\n" },
      }),
    });
    const { id } = (await created.json()) as { id: string };
    await fetch(`${api}/v1/invocations`, {
      method: "POST",
      headers: agent,
      body: JSON.stringify({
        tool: "bash",
        args: { command: "python3 app.py 8000 site", background: true },
        sandbox: id,
        toolCallId: `bench-preview-${Date.now()}`,
      }),
    });
    const exposed = (await (
      await fetch(`${api}/v1/sandboxes/${id}/ports`, {
        method: "POST",
        headers: agent,
        body: JSON.stringify({ port: 8000 }),
      })
    ).json()) as { pathUrl: string };
    const viaHost = `${hostUrl}/sandboxes/${id}/v1/preview/8000/`;
    for (let i = 0; i < 300; i++) {
      const res = await fetch(exposed.pathUrl).catch(() => null);
      if (res?.ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const rows: string[] = [];
    const row = (what: string, times: number[]) =>
      rows.push(
        `| ${what} | ${quantile(times, 0.5).toFixed(2)} ms | ${quantile(times, 0.99).toFixed(2)} ms |`,
      );
    const preview = await latencies(exposed.pathUrl, {});
    const route = await latencies(viaHost, hostAuth);
    const health = await latencies(`${hostUrl}/healthz`, {});
    row("preview URL (Worker, DO, host, way in, app)", preview);
    row("the host's preview route (host, way in, app)", route);
    row("the host's own /healthz", health);
    console.log(`${REQUESTS} sequential GETs of a 3-byte page\n`);
    console.log("| path | p50 | p99 |\n| --- | ---: | ---: |");
    console.log(rows.join("\n"));

    const big = `big?mb=${BIG_MIB}`;
    const viaPreview = await throughput(`${exposed.pathUrl}${big}`, {});
    const viaRoute = await throughput(`${viaHost}${big}`, hostAuth);
    const straight = await throughput(`http://127.0.0.1:${directPort}/${big}`, {});
    console.log(`\n${BIG_MIB} MiB download, median of ${ROUNDS}\n`);
    console.log("| path | MiB/s | against direct |\n| --- | ---: | ---: |");
    for (const [what, rate] of [
      ["preview URL", viaPreview],
      ["the host's preview route", viaRoute],
      ["direct: the same app on the host's loopback", straight],
    ] as const) {
      console.log(`| ${what} | ${rate.toFixed(0)} | ${(rate / straight).toFixed(2)}× |`);
    }
    await fetch(`${api}/v1/sandboxes/${id}`, { method: "DELETE", headers: agent });
  } finally {
    direct.kill("SIGKILL");
    await stop();
  }
}
