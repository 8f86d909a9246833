/**
 * Issue 26's terminals for people (decision 191), through the whole stack (bench/stack.ts:
 * `wrangler dev` and a real sandbox host):
 *
 * - keystroke to screen: a person's key (`POST /terminal/input` with an attach token)
 *   until a WebSocket subscriber of the call holds its echo, p50/p95, against the sandbox
 *   host's own echo time (its `/input`, then its `/terminal` read until the byte is there);
 * - bytes a subscriber receives per echoed keystroke and per full-screen repaint (`top`),
 *   against sending the whole screen (the bytes that draw it, `GET /terminal`) each time;
 * - WebSocket updates per second of a terminal flooded by `yes`, nobody typing and a
 *   person typing (an input's echo goes out unpaced; the flood must stay paced);
 * - the sandbox host's CPU with 100 idle terminals, against 100 idle pipe calls and none.
 *
 * `TERMINAL_KEYS` (default 60), `TERMINAL_FLOOD_SECONDS` (default 5),
 * `TERMINAL_TOP_SECONDS` (default 10) and `TERMINAL_IDLE` (default 100) set the load.
 */
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { subscribe } from "../src/client/subscription.ts";
import { groupOf, usageOf } from "./process-group.ts";
import { type Stack, startStack } from "./stack.ts";
import { compressedSize, wireSocket } from "./wire-bytes.ts";

const KEYS = Number(process.env.TERMINAL_KEYS ?? 60);
const TOP_SECONDS = Number(process.env.TERMINAL_TOP_SECONDS ?? 10);
const IDLE = Number(process.env.TERMINAL_IDLE ?? 100);
const FLOOD_SECONDS = Number(process.env.TERMINAL_FLOOD_SECONDS ?? 5);
/** Between keys: a fast typist. */
const KEY_GAP_MS = 150;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const ms = (n: number) => `${n.toFixed(1)} ms`;
/** How Toolwire's bytes compare with the alternative's, in the direction they go. */
const times = (alternative: number, ours: number) =>
  alternative >= ours
    ? `${(alternative / ours).toFixed(1)}× fewer`
    : `${(ours / alternative).toFixed(1)}× more`;

class Api {
  readonly stack: Stack;
  constructor(stack: Stack) {
    this.stack = stack;
  }
  async call(method: string, path: string, body?: unknown, auth = this.stack.apiToken) {
    const res = await fetch(`${this.stack.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
  async tty(command: string, extra: Record<string, unknown> = {}) {
    return (await this.call("POST", "/v1/invocations", {
      tool: "bash",
      args: { command, tty: true, timeout: 900, ...extra },
    })) as { id: string; socketUrl: string };
  }
  async attach(id: string) {
    return (await this.call("POST", `/v1/invocations/${id}/attach`, { name: "bench" }))
      .attachToken as string;
  }
  /** The whole screen as GET /terminal sends it (JSON text). */
  async paint(id: string) {
    return JSON.stringify(await this.call("GET", `/v1/invocations/${id}/terminal`));
  }
  cancel(id: string) {
    return this.call("POST", `/v1/invocations/${id}/cancel`, {}).catch(() => null);
  }
}

const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const bytes = (n: number) => `${Math.round(n).toLocaleString("en-US")} B`;

async function keystrokes(api: Api, lines: string[]) {
  const { stack } = api;
  // A full screen first (39 rows of 110 characters), then a prompt-less echo of each key.
  const call = await api.tty(
    "for i in $(seq 1 39); do printf '%0110d\\n' 0; done; cat > /dev/null",
    {
      cols: 120,
      rows: 40,
    },
  );
  const attachToken = await api.attach(call.id);
  const sub = subscribe(call.socketUrl);
  const raw = await wireSocket(call.socketUrl);
  const total = () => sub.state?.truncation.totalBytes ?? -1;
  const waitFor = async (bytes: number) => {
    const deadline = Date.now() + 20_000;
    while (total() < bytes) {
      if (Date.now() > deadline) {
        throw new Error(`the subscriber holds ${total()} bytes after 20 s, not ${bytes}`);
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 250);
        const off = sub.onChange(() => {
          off();
          clearTimeout(timer);
          resolve(null);
        });
      });
    }
  };
  console.error("keystrokes: the screen filled, typing…");
  await waitFor(39 * 112);
  await sleep(1000);
  const through: number[] = [];
  raw.reset();
  /** The alternative: the whole screen after each key. */
  const screens: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const before = total();
    const t0 = performance.now();
    // As a page does: the echo is awaited on the subscription, not the input's answer.
    const typing = api.call(
      "POST",
      `/v1/invocations/${call.id}/terminal/input`,
      { data: "x" },
      attachToken,
    );
    await waitFor(before + 1);
    through.push(performance.now() - t0);
    await typing;
    const gap = sleep(KEY_GAP_MS);
    screens.push(await api.paint(call.id));
    await gap;
  }
  await sleep(500);
  const sent = { ...raw.counts };
  // The sandbox host's own echo: its /input, then its /terminal until the byte is there.
  const host = `${stack.sandboxUrl}/v1/exec/${call.id}`;
  const hostHeaders = {
    authorization: `Bearer ${stack.sandboxToken}`,
    "content-type": "application/json",
  };
  const hostTotal = async () =>
    (
      (await (await fetch(`${host}/terminal`, { headers: hostHeaders })).json()) as {
        totalBytes: number;
      }
    ).totalBytes;
  const own: number[] = [];
  for (let i = 0; i < KEYS; i++) {
    const before = await hostTotal();
    const t0 = performance.now();
    await (
      await fetch(`${host}/input`, {
        method: "POST",
        headers: hostHeaders,
        body: JSON.stringify({ data: "y", waitMs: 0 }),
      })
    ).body?.cancel();
    while ((await hostTotal()) <= before) {}
    own.push(performance.now() - t0);
    await sleep(KEY_GAP_MS);
  }
  raw.close();
  sub.close();
  await api.cancel(call.id);
  through.sort((a, b) => a - b);
  own.sort((a, b) => a - b);
  lines.push(
    `| keystroke → echo at a WebSocket subscriber, p50 / p95 (${KEYS} keys) | ${ms(pct(through, 50))} / ${ms(pct(through, 95))} | ${ms(pct(own, 50))} / ${ms(pct(own, 95))} (the host's own: its /input, then its /terminal) | ${(pct(through, 95) / pct(own, 95)).toFixed(1)}× at p95; aim ≤ 50 ms p95: ${pct(through, 95) <= 50 ? "met" : "not met"} |`,
    `| bytes a subscriber receives per echoed keystroke: message text / on the wire (permessage-deflate) | ${bytes(sent.text / KEYS)} / ${bytes(sent.wire / KEYS)} | ${bytes(avg(screens.map((s) => Buffer.byteLength(s))))} / ${bytes((await compressedSize(screens)) / KEYS)} (the whole screen after each key, as GET /terminal draws it; on the wire through the same compression) | ${times(avg(screens.map((s) => Buffer.byteLength(s))), sent.text / KEYS)} / ${times((await compressedSize(screens)) / KEYS, sent.wire / KEYS)} |`,
  );
}

/**
 * A program that floods its terminal (`yes`): WebSocket updates per second while nobody
 * types, then while a person types a key every `KEY_GAP_MS`. An input's echo goes out
 * unpaced (decision 192), one publication per input, so the flood stays paced.
 */
async function flood(api: Api, lines: string[]) {
  console.error("flood: yes…");
  const call = await api.tty("yes", { cols: 120, rows: 40 });
  const attachToken = await api.attach(call.id);
  const raw = await wireSocket(call.socketUrl);
  await sleep(2000);
  const rate = async (typing: boolean) => {
    const before = raw.counts.updates;
    const started = performance.now();
    let keys = 0;
    while (performance.now() - started < FLOOD_SECONDS * 1000) {
      if (typing) {
        keys++;
        await api.call(
          "POST",
          `/v1/invocations/${call.id}/terminal/input`,
          { data: "x" },
          attachToken,
        );
      }
      await sleep(KEY_GAP_MS);
    }
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: (raw.counts.updates - before) / seconds, keysPerSecond: keys / seconds };
  };
  const alone = await rate(false);
  const typed = await rate(true);
  raw.close();
  await api.cancel(call.id);
  lines.push(
    `| WebSocket updates per second, \`yes\` flooding a 120×40 terminal, ${FLOOD_SECONDS} s each | ${typed.perSecond.toFixed(1)}/s while a person types ${typed.keysPerSecond.toFixed(1)} keys/s | ${alone.perSecond.toFixed(1)}/s with nobody typing | ${(typed.perSecond - alone.perSecond).toFixed(1)}/s (at most one early update per key) |`,
  );
}

async function repaints(api: Api, lines: string[]) {
  console.error("repaints: top…");
  const call = await api.tty(`top -d 1 -n ${TOP_SECONDS}`, { cols: 120, rows: 40 });
  const raw = await wireSocket(call.socketUrl);
  raw.reset();
  const paints: string[] = [];
  const started = Date.now();
  while (Date.now() - started < (TOP_SECONDS - 1) * 1000) {
    await sleep(1000);
    const paint = await api.paint(call.id).catch(() => null);
    if (paint !== null) paints.push(paint);
  }
  const settled = (await api.call("GET", `/v1/invocations/${call.id}/result?wait=30`)) as {
    truncation?: { totalBytes: number };
  };
  await sleep(500);
  raw.close();
  const screen = avg(paints.map((p) => Buffer.byteLength(p)));
  const screenWire = (await compressedSize(paints)) / paints.length;
  const text = raw.counts.text / TOP_SECONDS;
  const wire = raw.counts.wire / TOP_SECONDS;
  const output = settled.truncation?.totalBytes ?? Number.NaN;
  lines.push(
    `| bytes per full-screen repaint, \`top -d 1\` at 120×40 for ${TOP_SECONDS} s (${raw.counts.updates} updates): message text / on the wire (${raw.extensions || "no compression"}) | ${bytes(text)} / ${bytes(wire)} | ${bytes(screen)} / ${bytes(screenWire)} (the whole screen each time; on the wire through the same compression) | ${times(screen, text)} / ${times(screenWire, wire)} (top printed ${(output / TOP_SECONDS).toFixed(0)} B a repaint) |`,
  );
}

async function idleCpu(api: Api, stack: Stack, lines: string[]) {
  const host = groupOf([path.resolve(import.meta.dirname, "../sandbox/main.ts")]);
  if (host === null) throw new Error("cannot find the sandbox host's process group");
  const cpuOver = async (seconds: number) => {
    const before = usageOf(host).cpu;
    await sleep(seconds * 1000);
    return ((usageOf(host).cpu - before) / seconds) * 100;
  };
  const startMany = async (make: () => Promise<{ id: string }>) => {
    const ids: string[] = [];
    for (let i = 0; i < IDLE; i += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, IDLE - i) }, make));
      ids.push(...batch.map((c) => c.id));
    }
    await sleep(3000);
    return ids;
  };
  console.error("idle CPU: none, then pipes, then terminals…");
  const none = await cpuOver(10);
  const pipes = await startMany(
    async () =>
      (await api.call("POST", "/v1/invocations", {
        tool: "bash",
        args: { command: "cat > /dev/null", background: true, timeout: 900 },
      })) as { id: string },
  );
  const pipeCpu = await cpuOver(10);
  await Promise.all(pipes.map((id) => api.cancel(id)));
  await sleep(3000);
  const ttys = await startMany(() => api.tty("cat > /dev/null"));
  const ttyCpu = await cpuOver(10);
  await Promise.all(ttys.map((id) => api.cancel(id)));
  void stack;
  lines.push(
    `| sandbox host CPU, ${IDLE} idle terminals (\`cat\` waiting for input), over 10 s | ${ttyCpu.toFixed(1)}% of a core | ${pipeCpu.toFixed(1)}% (${IDLE} idle pipe calls) / ${none.toFixed(1)}% (none) | ${(ttyCpu - pipeCpu).toFixed(1)} points for the terminals |`,
  );
}

export default async function bench(): Promise<void> {
  // 100 idle terminals and 100 idle pipe calls must all run, not wait their turn.
  process.env.SANDBOX_MAX_RUNNING_EXECS = String(Math.max(64, IDLE + 16));
  const stack = await startStack();
  const api = new Api(stack);
  const lines = ["| what | Toolwire | alternative | ratio |", "| --- | ---: | ---: | ---: |"];
  try {
    await keystrokes(api, lines);
    await flood(api, lines);
    await repaints(api, lines);
    await idleCpu(api, stack, lines);
  } finally {
    console.log(lines.join("\n"));
    await stack.stop();
  }
}
