/**
 * grep's `context` on the sandbox host (decision 136) against pi's own local grep with the
 * same context, over the same real file, in the same run, interleaved. Per case: the time
 * of one grep (the host: HTTP request to answer; pi: its tool's execute), and the lines
 * and bytes of the answer. Shows what context costs on each engine against context 0.
 *
 * The file has BENCH_GREP_LINES lines (default 200,000), a match every 100th. Medians of
 * BENCH_GREP_RUNS runs (default 5). Not part of `npm test`: `npm run bench -- grep-context`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createGrepToolDefinition } from "@mariozechner/pi-coding-agent";
import { findRipgrep } from "../sandbox/files/ripgrep.ts";
import { DEFAULT_SANDBOX_CONFIG, startSandboxHost } from "../sandbox/index.ts";
import { SandboxClient } from "../src/execenv/index.ts";
import { load, median } from "./run-stats.ts";

const LINES = Number(process.env.BENCH_GREP_LINES ?? 200_000);
const RUNS = Number(process.env.BENCH_GREP_RUNS ?? 5);
const CONTEXTS = [0, 2, 10];
const LIMIT = 1000;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

export default async function grepContextBench(): Promise<void> {
  const rg = findRipgrep();
  if (!rg) throw new Error("the grep bench needs ripgrep (apt-get install ripgrep)");
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-bench-grep-"));
  const lines = Array.from({ length: LINES }, (_, i) =>
    i % 100 === 50 ? `hit ${i + 1} needle` : `line ${i + 1} of the haystack, nothing here`,
  );
  writeFileSync(path.join(root, "big.txt"), `${lines.join("\n")}\n`);
  const token = randomBytes(16).toString("hex");
  const hosts = [];
  for (const [name, rgPath] of [
    ["walker", null],
    ["ripgrep", rg],
  ] as const) {
    const host = await startSandboxHost({
      ...DEFAULT_SANDBOX_CONFIG,
      rgPath,
      token,
      port: 0,
      root,
    });
    hosts.push({ name, host, client: new SandboxClient(host.url, token) });
  }
  const pi = createGrepToolDefinition(root);
  console.log(
    `${LINES.toLocaleString("en-US")} lines, a match every 100th, limit ${LIMIT}; medians of ${RUNS} interleaved runs; load average at start ${load()}`,
  );
  console.log("\n| context | engine | ms | × context 0 | × pi's local grep | lines | answer KiB |");
  console.log("| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
  const base = new Map<string, number>();
  for (const context of CONTEXTS) {
    const samples = new Map<string, number[]>();
    const shape = new Map<string, { lines: number; bytes: number }>();
    for (let run = 0; run < RUNS; run++) {
      for (const { name, client } of hosts) {
        const { ms, value } = await timed(() =>
          client.grep({ pattern: "needle", context, limit: LIMIT }),
        );
        samples.set(name, [...(samples.get(name) ?? []), ms]);
        const count = value.matches.reduce(
          (n, m) => n + 1 + (m.before?.length ?? 0) + (m.after?.length ?? 0),
          0,
        );
        shape.set(name, { lines: count, bytes: Buffer.byteLength(JSON.stringify(value)) });
      }
      const { ms, value } = await timed(() =>
        pi.execute(
          "bench",
          { pattern: "needle", context, limit: LIMIT },
          undefined,
          undefined,
          undefined as never,
        ),
      );
      samples.set("pi", [...(samples.get("pi") ?? []), ms]);
      const first = value.content[0];
      const text = first?.type === "text" ? first.text : "";
      shape.set("pi", { lines: text.split("\n").length, bytes: Buffer.byteLength(text) });
    }
    const piMs = median(samples.get("pi") ?? []);
    for (const name of ["walker", "ripgrep", "pi"]) {
      const ms = median(samples.get(name) ?? []);
      if (context === 0) base.set(name, ms);
      const s = shape.get(name) ?? { lines: 0, bytes: 0 };
      const vsPi = name === "pi" ? "—" : `${(ms / piMs).toFixed(2)}×`;
      console.log(
        `| ${context} | ${name === "pi" ? "pi's local grep" : `host, ${name}`} | ${ms.toFixed(1)} | ${(ms / (base.get(name) ?? ms)).toFixed(2)}× | ${vsPi} | ${s.lines.toLocaleString("en-US")} | ${(s.bytes / 1024).toFixed(1)} |`,
      );
    }
  }
  for (const { host } of hosts) await host.close();
  rmSync(root, { recursive: true, force: true });
  console.log(`\nLoad average at the end ${load()}`);
}
