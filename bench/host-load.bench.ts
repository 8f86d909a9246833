/**
 * The sandbox host's memory under a burst of concurrent commands (issue 20: "100
 * concurrent commands … its RSS went from 214 MB to 1.05 GB"). A host process of its
 * own (`node sandbox/main.ts`, jailed) gets BENCH_HOST_LOAD_EXECS (100) bash calls at
 * once from this process, each read to its exit; its resident set (VmRSS) and private
 * memory (RssAnon) are sampled every 20 ms from after a warm-up exec to the last exit.
 *
 * Rows: the host as configured by default (SANDBOX_MAX_RUNNING_EXECS=32), and the same
 * host with no effective limit (the limit set to the number of calls: the host
 * limited nothing). Two commands: one that spills (`seq 1 200000` then 2 s of sleep)
 * and one that prints a line and sleeps 2 s. BENCH_HOST_LOAD_BEFORE=<path to another
 * checkout's sandbox/main.ts> adds that host's rows (before/after). Every call is checked:
 * exit 0 and exact totals, or a 503 `busy` refusal.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SandboxClient, SandboxHttpError, type ShellUpdate } from "../src/execenv/index.ts";
import { load } from "./run-stats.ts";

const EXECS = Number(process.env.BENCH_HOST_LOAD_EXECS ?? 100);
const BEFORE = process.env.BENCH_HOST_LOAD_BEFORE;
const ROOT = path.resolve(import.meta.dirname, "..");

const COMMANDS = [
  { name: "`seq 1 200000; sleep 2` (spills)", command: "seq 1 200000; sleep 2", lines: 200_000 },
  { name: "`echo one; sleep 2`", command: "echo one; sleep 2", lines: 1 },
];

interface Memory {
  rss: number;
  anon: number;
  threads: number;
}

/** Resident set and private memory (MiB) and thread count of a process. */
function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: field("VmRSS") / 1024, anon: field("RssAnon") / 1024, threads: field("Threads") };
}

interface Host {
  child: ChildProcess;
  client: SandboxClient;
  root: string;
}

async function startHost(entry: string, maxRunning: number): Promise<Host> {
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-host-load-"));
  const token = randomBytes(24).toString("hex");
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      SANDBOX_TOKEN: token,
      PORT: "0",
      HOST: "127.0.0.1",
      SANDBOX_ROOT: root,
      SANDBOX_MAX_RUNNING_EXECS: String(maxRunning),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The host's own warnings at start (the same every time) are not the bench's output.
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (text: string) => {
    const rest = text.split("\n").filter((line) => line !== "" && !line.startsWith("WARNING: "));
    if (rest.length > 0) process.stderr.write(`${rest.join("\n")}\n`);
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (line: string) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`sandbox host exited (${code})`)));
  });
  return { child, client: new SandboxClient(url, token), root };
}

async function stopHost(host: Host): Promise<void> {
  const exited = new Promise((resolve) => host.child.once("exit", resolve));
  host.child.kill("SIGTERM");
  await exited;
  rmSync(host.root, { recursive: true, force: true });
  rmSync(`${host.root}.spill`, { recursive: true, force: true });
}

/** Runs one call to its exit: "ok" when exact, "busy" when refused with 503, else what went wrong. */
async function call(client: SandboxClient, command: string, lines: number): Promise<string> {
  const execId = `load-${randomBytes(6).toString("hex")}`;
  let exit: Extract<ShellUpdate, { kind: "exit" }> | null = null;
  let totalLines = -1;
  try {
    for await (const u of client.exec({ execId, command })) {
      if (u.kind === "exit") exit = u;
      else if (u.kind === "replace") totalLines = u.output.totalLines;
      else if (u.kind !== "queue") totalLines = u.metadata.totalLines;
    }
  } catch (err) {
    if (err instanceof SandboxHttpError && err.status === 503) return "busy";
    return `failed: ${(err as Error).message}`;
  }
  if (exit?.exitCode !== 0) return `exit ${JSON.stringify(exit)}`;
  return totalLines === lines ? "ok" : `lines ${totalLines}`;
}

interface Row {
  host: string;
  command: string;
  idle: Memory;
  peak: Memory;
  after: Memory;
  outcomes: Record<string, number>;
  seconds: number;
}

async function measure(label: string, entry: string, maxRunning: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { name, command, lines } of COMMANDS) {
    const host = await startHost(entry, maxRunning);
    const pid = host.child.pid!;
    try {
      // The first exec compiles the host's code paths: measured from after it.
      await call(host.client, "seq 1 300000", 300_000);
      const idle = memory(pid);
      const peak = { ...idle };
      const sampler = setInterval(() => {
        const now = memory(pid);
        peak.rss = Math.max(peak.rss, now.rss);
        peak.anon = Math.max(peak.anon, now.anon);
        peak.threads = Math.max(peak.threads, now.threads);
      }, 20);
      const started = performance.now();
      const results = await Promise.all(
        Array.from({ length: EXECS }, () => call(host.client, command, lines)),
      );
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      const outcomes: Record<string, number> = {};
      for (const r of results) outcomes[r] = (outcomes[r] ?? 0) + 1;
      rows.push({ host: label, command: name, idle, peak, after: memory(pid), outcomes, seconds });
    } finally {
      await stopHost(host);
    }
  }
  return rows;
}

export default async function hostLoad(): Promise<void> {
  console.log(`${EXECS} bash calls at once to one host; load average before: ${load()}\n`);
  const entry = path.join(ROOT, "sandbox/main.ts");
  const rows: Row[] = [];
  rows.push(...(await measure("this checkout, limit 32 (default)", entry, 32)));
  rows.push(...(await measure(`this checkout, limit ${EXECS} (none)`, entry, EXECS)));
  if (BEFORE) {
    rows.push(...(await measure("before, limit 32 (default)", BEFORE, 32)));
    rows.push(...(await measure(`before, limit ${EXECS} (none)`, BEFORE, EXECS)));
  }
  const mib = (n: number) => n.toFixed(0);
  console.log(
    "| host | command | RSS idle MiB | RSS peak MiB | RssAnon idle → peak MiB | threads peak | after MiB | outcomes | s |",
  );
  console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
  for (const r of rows) {
    const outcomes = Object.entries(r.outcomes)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ");
    console.log(
      `| ${r.host} | ${r.command} | ${mib(r.idle.rss)} | ${mib(r.peak.rss)} | ${mib(r.idle.anon)} → ${mib(r.peak.anon)} | ${r.peak.threads} | ${mib(r.after.rss)} | ${outcomes} | ${r.seconds.toFixed(1)} |`,
    );
  }
  console.log(`\nload average after: ${load()}`);
}
