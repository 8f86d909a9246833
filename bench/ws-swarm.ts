/**
 * The clients of the subscribers-at-scale bench, in their own process (so their CPU is
 * not the server's): opens `count` WebSockets to `url` at once and times each from its
 * `new WebSocket` to its first message of type `until` (any message when `until` is
 * "any"). Prints one `SWARM {…}` line of results once every socket has its first state
 * or `timeoutMs` passed (with the most messages a socket took to reach it, and the first
 * state's size), keeps the sockets open (counting the updates that arrive, and for how
 * long) until a line on stdin, prints `HELD {…}`, then closes them and exits.
 *
 * Run by bench/subscribers.bench.ts: `node bench/ws-swarm.ts '{"url":…,"count":1000,…}'`.
 */
import { createInterface } from "node:readline";

interface SwarmOptions {
  url: string;
  count: number;
  until: string;
  timeoutMs: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as SwarmOptions;
const firstState: number[] = [];
/** Per socket: messages received up to and including its first state. */
const messagesToFirst: number[] = [];
let firstStateBytes = 0;
const sockets: WebSocket[] = [];
let errors = 0;
let laterUpdates = 0;
/** Updates that arrived after every socket had its first state (the hold). */
let heldUpdates = 0;
let heldFrom: number | null = null;
let socketsWithLaterUpdates = 0;

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

const allFirst = new Promise<void>((resolve) => {
  let settled = 0;
  const one = () => {
    if (++settled === options.count) resolve();
  };
  for (let i = 0; i < options.count; i++) {
    const opened = performance.now();
    const ws = new WebSocket(options.url);
    sockets.push(ws);
    let first = false;
    let later = false;
    let received = 0;
    ws.addEventListener("message", (event) => {
      const text = String(event.data);
      const type = (JSON.parse(text) as { type?: string }).type;
      received++;
      if (!first && (options.until === "any" || type === options.until)) {
        first = true;
        firstState.push(performance.now() - opened);
        messagesToFirst.push(received);
        firstStateBytes = Math.max(firstStateBytes, text.length);
        one();
      } else if (first && type === "tool_update") {
        laterUpdates++;
        if (heldFrom !== null) heldUpdates++;
        if (!later) socketsWithLaterUpdates++;
        later = true;
      }
    });
    ws.addEventListener("error", () => {
      errors++;
      if (!first) {
        first = true;
        one();
      }
    });
  }
  setTimeout(resolve, options.timeoutMs);
});

await allFirst;
const sorted = [...firstState].sort((a, b) => a - b);
console.log(
  `SWARM ${JSON.stringify({
    count: options.count,
    gotFirst: sorted.length,
    errors,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    messagesToFirst: Math.max(0, ...messagesToFirst),
    firstStateBytes,
  })}`,
);
heldFrom = performance.now();
const lines = createInterface({ input: process.stdin });
for await (const _line of lines) break;
const heldMs = performance.now() - heldFrom;
console.log(
  `HELD ${JSON.stringify({ laterUpdates, socketsWithLaterUpdates, heldUpdates, heldMs })}`,
);
for (const ws of sockets) ws.close();
process.exit(0);
