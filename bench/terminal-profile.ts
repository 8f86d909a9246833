/**
 * Where a keystroke's milliseconds go (issue 26's latency aim), tapped from outside:
 * a key typed through the Worker's `POST /terminal/input`, then when (a) the input route
 * answered, (b) a second reader of the sandbox host's own update stream (the one the
 * Durable Object reads) got the echo, (c) a WebSocket subscriber of the call got it.
 * Run: `node bench/terminal-profile.ts` (prints the stages' p50/p95).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { subscribe } from "../src/client/subscription.ts";
import { execIdFor, readNdjson } from "../src/execenv/index.ts";
import { startStack } from "./stack.ts";

const KEYS = Number(process.env.TERMINAL_KEYS ?? 40);
const GAP = Number(process.env.TERMINAL_GAP_MS ?? 150);
const stack = await startStack();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(1);
};
try {
  const res = await fetch(`${stack.apiUrl}/v1/invocations`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      tool: "bash",
      args: { command: "cat > /dev/null", tty: true, timeout: 300 },
    }),
  });
  const call = (await res.json()) as { id: string; socketUrl: string };
  const grant = await fetch(`${stack.apiUrl}/v1/invocations/${call.id}/attach`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
    body: "{}",
  });
  const attachToken = ((await grant.json()) as { attachToken: string }).attachToken;
  const sub = subscribe(call.socketUrl);
  const execId = await execIdFor(call.id);
  const host = await fetch(`${stack.sandboxUrl}/v1/exec/${execId}`, {
    headers: { authorization: `Bearer ${stack.sandboxToken}` },
  });
  let hostTotal = 0;
  let hostAt = 0;
  void (async () => {
    for await (const u of readNdjson(host.body!)) {
      const update = u as { output?: { totalBytes: number }; metadata?: { totalBytes: number } };
      const t = update.metadata?.totalBytes ?? update.output?.totalBytes;
      if (t !== undefined && t > hostTotal) {
        hostTotal = t;
        hostAt = performance.now();
      }
    }
  })();
  await sleep(1500);
  const wsTotal = () => sub.state?.truncation.totalBytes ?? -1;
  const stages = { answered: [] as number[], hostStream: [] as number[], ws: [] as number[] };
  for (let i = 0; i < KEYS; i++) {
    const before = wsTotal();
    const hostBefore = hostTotal;
    const t0 = performance.now();
    let answeredAt = 0;
    const typing = fetch(`${stack.apiUrl}/v1/invocations/${call.id}/terminal/input`, {
      method: "POST",
      headers: { authorization: `Bearer ${attachToken}`, "content-type": "application/json" },
      body: JSON.stringify({ data: "x" }),
    }).then(async (r) => {
      await r.text();
      answeredAt = performance.now();
    });
    while (wsTotal() <= before) await new Promise((r) => setTimeout(r, 1));
    stages.ws.push(performance.now() - t0);
    await typing;
    stages.answered.push(answeredAt - t0);
    stages.hostStream.push(hostTotal > hostBefore ? hostAt - t0 : Number.NaN);
    await sleep(GAP);
  }
  const direct: number[] = [];
  for (let i = 0; i < KEYS; i++) {
    const hostBefore = hostTotal;
    const t0 = performance.now();
    void fetch(`${stack.sandboxUrl}/v1/exec/${execId}/input`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${stack.sandboxToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ data: "y", waitMs: 0 }),
    }).then((r) => r.text());
    while (hostTotal <= hostBefore) await new Promise((r) => setTimeout(r, 1));
    direct.push(hostAt - t0);
    await sleep(GAP);
  }
  Object.assign(stages, { directHostStream: direct });
  for (const [name, xs] of Object.entries(stages)) {
    console.log(`${name}: p50 ${pct(xs, 50)} ms, p95 ${pct(xs, 95)} ms`);
  }
  sub.close();
} finally {
  await stack.stop();
}
