import { execSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sharedSpawner } from "../../../sandbox/exec/spawner.ts";
import {
  DEFAULT_SANDBOX_CONFIG,
  type SandboxConfig,
  startSandboxHost,
} from "../../../sandbox/index.ts";
import type { SandboxSet } from "../../../sandbox/sandboxes/sandbox-set.ts";
import type { Truncation } from "../../../src/core/output/index.ts";
import { SandboxClient, type ShellUpdate } from "../../../src/execenv/index.ts";

export interface TestHost {
  url: string;
  root: string;
  /** The host's spill folder (outside the workspace; jails see it read-only at /toolwire/spill). */
  spillDir: string;
  token: string;
  client: SandboxClient;
  /** Its created sandboxes, for what only the host itself reaches. */
  sandboxes: SandboxSet;
  close(): Promise<void>;
}

/** A real sandbox host on a free loopback port with a fresh temp workspace. */
export async function startTestHost(overrides: Partial<SandboxConfig> = {}): Promise<TestHost> {
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-sandbox-"));
  const token = randomBytes(24).toString("hex");
  const host = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    rgPath: null,
    killGraceMs: 300,
    ...overrides,
    token,
    port: 0,
    root,
  });
  return {
    url: host.url,
    root: host.root,
    spillDir: `${host.root}.spill`,
    token,
    client: new SandboxClient(host.url, token),
    sandboxes: host.sandboxes,
    async close() {
      await host.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(`${root}.spill`, { recursive: true, force: true });

      // Where created sandboxes go by default (sandbox/sandboxes/config.ts), empty by now.
      rmSync(`${root}-sandboxes`, { recursive: true, force: true });
    },
  };
}

/**
 * Host path of a published spill path (`/toolwire/spill/<id>.log`).
 * @example readFileSync(spillOnHost(host, f.metadata!.spillPath!))
 */
export function spillOnHost(host: { spillDir: string }, spillPath: string): string {
  return path.join(host.spillDir, path.basename(spillPath));
}

/** What a consumer ends up with after folding every update of one stream. */
export interface Folded {
  updates: ShellUpdate[];
  text: string;
  metadata: Truncation | null;
  exit: Extract<ShellUpdate, { kind: "exit" }> | null;
}

/**
 * Folds Shell updates into a replica the way the Durable Object does, checking on the
 * way that the first update is a `replace` and that every slide drops text the replica has.
 */
export async function fold(updates: AsyncIterable<ShellUpdate>, into?: Folded): Promise<Folded> {
  const out: Folded = into ?? { updates: [], text: "", metadata: null, exit: null };
  const fresh = out.updates.length;
  for await (const u of updates) {
    if (out.updates.length === fresh && u.kind !== "replace") {
      throw new Error(`first update of a stream was ${u.kind}, not replace`);
    }
    out.updates.push(u);
    applyUpdate(out, u);
  }
  return out;
}

export function applyUpdate(out: Folded, u: ShellUpdate): void {
  switch (u.kind) {
    case "replace": {
      const { text, ...metadata } = u.output;
      out.text = text;
      out.metadata = metadata;
      break;
    }
    case "append":
      out.text += u.text;
      out.metadata = u.metadata;
      break;
    case "slide":
      if (u.drop > out.text.length)
        throw new Error(`slide drops ${u.drop} of ${out.text.length} units`);
      out.text = out.text.slice(u.drop) + u.text;
      out.metadata = u.metadata;
      break;
    case "metadata":
      out.metadata = u.metadata;
      break;
    case "exit":
      out.exit = u;
      break;
  }
}

let counter = 0;
/** A fresh exec id. */
export function execId(prefix = "t"): string {
  counter++;
  return `${prefix}-${process.pid}-${counter}-${randomBytes(3).toString("hex")}`;
}

/** SHA-256 (hex) of what `command` prints on stdout. */
export function sha256OfCommand(command: string): string {
  return execSync(`(${command}) | sha256sum`, { shell: "/bin/sh" }).toString().split(" ")[0]!;
}

/** SHA-256 (hex) of a file's bytes. */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * How many processes the host's spawner (in this test process) started still run: each
 * pipe command's outer bubblewrap, and each jail waiting for a first command (decision 276).
 */
export function spawnedProcesses(): number {
  const pid = sharedSpawner()?.pid;
  if (pid === undefined) return 0;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  return children === "" ? 0 : children.split(/\s+/).length;
}

/** Waits (up to 10 s) until `spawnedProcesses()` is `count`, and answers what it last was. */
export async function spawnedProcessesReach(count: number): Promise<number> {
  for (let waited = 0; spawnedProcesses() !== count && waited < 10_000; waited += 25) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return spawnedProcesses();
}

/**
 * Host pids of live (non-zombie) processes whose environment holds TOOLWIRE_MARK=`mark`:
 * how a test finds a jailed command's processes from outside its PID namespace.
 */
export function markedProcesses(mark: string): number[] {
  const needle = `\0TOOLWIRE_MARK=${mark}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      if (`\0${readFileSync(`/proc/${entry}/environ`, "latin1")}`.includes(needle)) {
        pids.push(Number(entry));
      }
    } catch {}
  }
  return pids;
}
