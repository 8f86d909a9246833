/**
 * `toolwire sandbox create|list|rm|upload|download|expose|ports|unexpose`: created
 * sandboxes from the command line (docs/sandboxes.md); `expose` prints a port's preview URL. A directory to upload is packed by the system's
 * `tar`; a download goes to `--out FILE` or stdout.
 */
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { durationSeconds } from "../duration.ts";
import type { SandboxesClient, SandboxView } from "../sandboxes.ts";
import type { CliProcess } from "./cli-process.ts";
import { UsageError } from "./usage.ts";

export type SandboxAction =
  | {
      action: "create";
      name?: string;
      /** `--backend host|container` (default host). */
      backend?: "host" | "container";
      idleTimeoutSeconds?: number;
      /** `--allow` entries, in order: the sandbox's network policy (none: no network). */
      allow?: string[];
      json: boolean;
    }
  | { action: "list"; json: boolean }
  | { action: "rm"; ids: string[] }
  | { action: "upload"; id: string; local: string; path: string }
  | { action: "download"; id: string; path: string; out?: string }
  | { action: "expose"; id: string; port: number; seconds?: number; json: boolean }
  | { action: "ports"; id: string; json: boolean }
  | { action: "unexpose"; id: string; port: number };

const USAGE =
  "sandbox create [--name N] [--backend host|container] [--idle 600|15m|2h] [--allow HOST[:PORT]]... [--json] | list [--json] | rm <id>... | upload <id> <dir-or-tar> [--path P] | download <id> [path] [--out FILE] | expose <id> <port> [--for SECONDS] [--json] | ports <id> [--json] | unexpose <id> <port>";

/**
 * Parses what follows `toolwire sandbox`.
 * @example parseSandboxArgs(["upload", "sbx_default_…", "./repo", "--path", "repo"])
 */
export function parseSandboxArgs(args: readonly string[]): SandboxAction {
  const [action, ...rest] = args;
  const options = new Map<string, string | true>();
  const positional: string[] = [];
  const allow: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--json") options.set("json", true);
    else if (arg === "--allow") {
      const value = rest[++i];
      if (value === undefined)
        throw new UsageError(`--allow needs a value. Usage: toolwire ${USAGE}`);
      allow.push(value);
      options.set("allow", value);
    } else if (arg.startsWith("--")) {
      const value = rest[++i];
      if (value === undefined)
        throw new UsageError(`${arg} needs a value. Usage: toolwire ${USAGE}`);
      options.set(arg.slice(2), value);
    } else positional.push(arg);
  }
  const str = (name: string) => {
    const v = options.get(name);
    return typeof v === "string" ? v : undefined;
  };
  const known: Record<string, string[]> = {
    create: ["name", "backend", "idle", "allow", "json"],
    list: ["json"],
    rm: [],
    upload: ["path"],
    download: ["out"],
    expose: ["for", "json"],
    ports: ["json"],
    unexpose: [],
  };
  if (!action || !(action in known)) throw new UsageError(`Usage: toolwire ${USAGE}`);
  for (const name of options.keys()) {
    if (!known[action]!.includes(name)) {
      throw new UsageError(`sandbox ${action} takes no --${name}. Usage: toolwire ${USAGE}`);
    }
  }
  const json = options.has("json");
  switch (action) {
    case "create": {
      const idle = str("idle");
      const seconds = idle === undefined ? undefined : durationSeconds(idle);
      if (seconds === null) {
        throw new UsageError(
          `--idle must be a duration: seconds (600) or with a unit (90s, 15m, 2h, 7d), got "${idle}".`,
        );
      }
      const backend = str("backend");
      if (backend !== undefined && backend !== "host" && backend !== "container") {
        throw new UsageError(`--backend must be host or container, got "${backend}".`);
      }
      return {
        action,
        json,
        ...(str("name") ? { name: str("name") } : {}),
        ...(backend ? { backend } : {}),
        ...(seconds ? { idleTimeoutSeconds: seconds } : {}),
        ...(allow.length > 0 ? { allow } : {}),
      };
    }
    case "list":
      return { action, json };
    case "rm":
      if (positional.length === 0)
        throw new UsageError("sandbox rm needs one or more sandbox ids.");
      return { action, ids: positional };
    case "upload":
      if (positional.length !== 2) throw new UsageError("sandbox upload needs <id> <dir-or-tar>.");
      return { action, id: positional[0]!, local: positional[1]!, path: str("path") ?? "" };
    case "expose":
    case "unexpose": {
      const port = Number(positional[1]);
      if (positional.length !== 2 || !Number.isInteger(port)) {
        throw new UsageError(`sandbox ${action} needs <id> <port>.`);
      }
      if (action === "unexpose") return { action, id: positional[0]!, port };
      const span = str("for");
      const seconds = span === undefined ? undefined : Number(span);
      if (seconds !== undefined && !(Number.isInteger(seconds) && seconds > 0)) {
        throw new UsageError(`--for must be a whole number of seconds, got "${span}".`);
      }
      return { action, id: positional[0]!, port, json, ...(seconds ? { seconds } : {}) };
    }
    case "ports":
      if (positional.length !== 1) throw new UsageError("sandbox ports needs <id>.");
      return { action, id: positional[0]!, json };
    default:
      if (positional.length < 1 || positional.length > 2)
        throw new UsageError("sandbox download needs <id> [path].");
      return {
        action: "download",
        id: positional[0]!,
        path: positional[1] ?? "",
        ...(str("out") ? { out: str("out") } : {}),
      };
  }
}

/** Runs one sandbox action and returns the exit status. */
export async function runSandbox(
  client: SandboxesClient,
  cmd: SandboxAction,
  proc: CliProcess,
): Promise<number> {
  const print = (text: string) => proc.stdout.write(`${text}\n`);
  switch (cmd.action) {
    case "create": {
      const view = await client.create({
        ...(cmd.name ? { name: cmd.name } : {}),
        ...(cmd.backend ? { backend: cmd.backend } : {}),
        ...(cmd.idleTimeoutSeconds ? { idleTimeoutSeconds: cmd.idleTimeoutSeconds } : {}),
        ...(cmd.allow ? { network: { allow: cmd.allow } } : {}),
      });
      print(cmd.json ? JSON.stringify(view, null, 2) : view.id);
      return 0;
    }
    case "list": {
      const all = await client.list();
      if (cmd.json) print(JSON.stringify(all, null, 2));
      else for (const s of all) print(line(s));
      return 0;
    }
    case "rm":
      for (const id of cmd.ids) print(line(await client.remove(id)));
      return 0;
    case "upload": {
      const result = await client.upload(cmd.id, cmd.path, tarStream(cmd.local));
      print(`${result.entries} entries (${result.bytes} bytes) into ${result.path || "."}`);
      return 0;
    }
    case "download": {
      const tar = Readable.fromWeb((await client.download(cmd.id, cmd.path)) as never);
      await pipeline(tar, cmd.out ? createWriteStream(cmd.out) : process.stdout);
      return 0;
    }
    case "expose": {
      const exposed = await client.expose(cmd.id, cmd.port, cmd.seconds);
      print(cmd.json ? JSON.stringify(exposed, null, 2) : exposed.url);
      return 0;
    }
    case "ports": {
      const ports = await client.ports(cmd.id);
      if (cmd.json) print(JSON.stringify(ports, null, 2));
      else for (const p of ports) print(`${p.port}\t${p.url}\tuntil ${p.expiresAt}`);
      return 0;
    }
    case "unexpose":
      await client.unexpose(cmd.id, cmd.port);
      print(`port ${cmd.port} of ${cmd.id}: its preview URL is revoked`);
      return 0;
  }
}

function line(s: SandboxView): string {
  const until = s.expiresAt ? `idle until ${s.expiresAt}` : `${s.endReason ?? ""}`;
  return `${s.id}\t${s.status}\t${s.name ?? "-"}\t${until}`;
}

/** A directory packed by `tar`, or a tar file as it is. */
function tarStream(local: string): ReadableStream<Uint8Array> {
  const info = statSync(local, { throwIfNoEntry: false });
  if (!info) throw new UsageError(`"${local}" does not exist.`);
  if (info.isFile()) return Readable.toWeb(createReadStream(local)) as ReadableStream<Uint8Array>;
  const tar = spawn("tar", ["-c", "-f", "-", "-C", local, "."], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return Readable.toWeb(tar.stdout) as ReadableStream<Uint8Array>;
}
