/**
 * Full-output search over HTTP ranges: the viewer's search (1 MiB ranges, the next one
 * prefetched, each searched as one string) against the previous one (every line decoded
 * from 64 KiB ranges, one after another), over a 5 MB file served by a local server with
 * Range support and a fixed delay per request standing in for the Worker → sandbox hop.
 * Times are medians of 5 runs; the machine is shared, so treat them as rough.
 * Run: node bench/run.ts full-output-search
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SpillReader } from "../src/client/full-output/spill-reader.ts";
import { load, median } from "./run-stats.ts";

const LINES = 400_000;
const file = Buffer.from(
  Array.from({ length: LINES }, (_, i) => `line ${String(i + 1).padStart(7, "0")}\n`).join(""),
);

function serve(
  delayMs: number,
): Promise<{ url: string; close: () => void; requests: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    const [, from = "0", to = ""] = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? "") ?? [];
    const start = Number(from);
    const end = to === "" ? file.length - 1 : Math.min(Number(to), file.length - 1);
    setTimeout(() => {
      res.writeHead(206, { "content-range": `bytes ${start}-${end}/${file.length}` });
      res.end(file.subarray(start, end + 1));
    }, delayMs);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/`,
        close: () => server.close(),
        requests: () => count,
      });
    }),
  );
}

/** The previous search: every line from 64 KiB ranges, decoded and tested in turn. */
async function lineByLine(reader: SpillReader, needle: string): Promise<number | null> {
  const lines = await reader.lines(1, Number.MAX_SAFE_INTEGER);
  return lines.find((line) => line.text.toLowerCase().includes(needle))?.line ?? null;
}

async function time(
  run: () => Promise<number | null>,
): Promise<{ ms: number; found: number | null }> {
  const times: number[] = [];
  let found: number | null = null;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    found = await run();
    times.push(performance.now() - started);
  }
  return { ms: median(times), found };
}

export default async function main(): Promise<void> {
  console.log(
    `${(file.length / 1e6).toFixed(1)} MB, ${LINES.toLocaleString("en")} lines; ${load()}`,
  );
  console.log(
    "| per-request delay | query | previous (64 KiB, line by line) | now (1 MiB, prefetched) | ratio |",
  );
  console.log("|---|---|---|---|---|");
  for (const delayMs of [0, 25]) {
    const server = await serve(delayMs);
    try {
      for (const [what, needle] of [
        ["hit on the last line", `line ${String(LINES).padStart(7, "0")}`],
        ["no match", "no such text"],
      ] as const) {
        // A fresh reader per run: no cached chunks, as when a search starts far away.
        const fresh = async () => {
          const reader = new SpillReader(server.url);
          await reader.open();
          return reader;
        };
        const before = await time(async () => lineByLine(await fresh(), needle));
        const after = await time(async () => (await fresh()).search(needle, 0, "next"));
        if (before.found !== after.found)
          throw new Error(`the searches disagree: ${before.found} vs ${after.found}`);
        console.log(
          `| ${delayMs} ms | ${what} | ${before.ms.toFixed(0)} ms | ${after.ms.toFixed(0)} ms | ${(before.ms / after.ms).toFixed(1)}x |`,
        );
      }
    } finally {
      server.close();
    }
  }
}
