/**
 * The clients of the subscribers-at-scale bench, in their own process (so their CPU is
 * not the server's): opens `count` WebSockets to `url` at once and times each from its
 * `new WebSocket` to its first message of type `until` (any message when `until` is
 * "any"). Prints one `SWARM {…}` line of results once every socket has its first state
 * or `timeoutMs` passed, keeps the sockets open (counting the updates that arrive) until
 * a line on stdin, prints `HELD {…}`, then closes them and exits.
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
const sockets: WebSocket[] = [];
let errors = 0;
let laterUpdates = 0;
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
    ws.addEventListener("message", (event) => {
      const type = (JSON.parse(String(event.data)) as { type?: string }).type;
      if (!first && (options.until === "any" || type === options.until)) {
        first = true;
        firstState.push(performance.now() - opened);
        one();
      } else if (first && type === "tool_update") {
        laterUpdates++;
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
  })}`,
);
const lines = createInterface({ input: process.stdin });
for await (const _line of lines) break;
console.log(`HELD ${JSON.stringify({ laterUpdates, socketsWithLaterUpdates })}`);
for (const ws of sockets) ws.close();
process.exit(0);
