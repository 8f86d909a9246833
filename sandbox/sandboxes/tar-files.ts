import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, open, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { SandboxError } from "../errors.ts";
import { pathError } from "../files/path-error.ts";
import { findExecutable } from "../jail/find-executable.ts";
import type { Jail } from "../jail/jail.ts";
import type { Workspace } from "../workspace.ts";
import { TarCheck, TarRefusal } from "./tar-check.ts";

/** What the file routes of one sandbox need. */
export interface TarPlace {
  workspace: Workspace;
  jail: Jail;
  /** A directory on the sandbox's own disk, outside its workspace, for the archive in transit. */
  incomingDir: string;
}

/** What an upload did. */
interface UploadResult {
  path: string;
  entries: number;
  bytes: number;
}

/**
 * Extracts the tar archive `body` into workspace directory `target` (made if missing).
 * The archive is checked as it arrives (tar-check.ts) and written to the sandbox's own
 * disk, outside the workspace, so it counts against the quota; only a complete archive
 * whose every entry stays inside is then extracted, by `tar` in the sandbox's jail,
 * where nothing but the workspace is writable. A refused archive changes nothing.
 * @example await uploadTar(place, "src", request.body);
 */
export async function uploadTar(
  place: TarPlace,
  target: string,
  body: ReadableStream<Uint8Array> | null,
): Promise<UploadResult> {
  if (!body) throw new SandboxError("bad_request", "send the tar archive as the request body");
  const reader = body.getReader();
  try {
    return await receive(place, target, reader);
  } catch (err) {
    // Read what the caller is still sending before answering: a connection closed under
    // a body in flight reaches the Worker as a lost host (502), not as this refusal.
    await drain(reader);
    throw uploadError(err);
  }
}

async function receive(
  place: TarPlace,
  target: string,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<UploadResult> {
  const abs = await place.workspace.resolve(target);
  const check = new TarCheck(place.workspace.relative(abs));
  await mkdir(place.incomingDir, { recursive: true });
  const archive = path.join(place.incomingDir, `${randomBytes(8).toString("hex")}.tar`);
  let bytes = 0;
  try {
    const file = await open(archive, "wx");
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        check.push(next.value);
        bytes += next.value.length;
        await file.write(next.value);
      }
      check.end();
    } finally {
      await file.close();
    }
    try {
      place.workspace.makeDirectorySync(abs);
    } catch (err) {
      throw pathError(err, target);
    }
    const into = place.jail.pathInside(abs);
    await jailedTar(place.jail, ["-x", "--no-same-owner", "-f", "-", "-C", into], abs, archive);
    return { path: place.workspace.relative(abs), entries: check.entries, bytes };
  } finally {
    await rm(archive, { force: true });
  }
}

/**
 * Most of a refused upload's body read (and dropped) before the answer; past it the
 * connection is closed. Refusals come at the first bad header, so a caller sending more
 * than this after one is not a tar client.
 */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let read = 0;
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      read += next.value.length;
      if (read > MAX_DRAIN_BYTES) {
        await reader.cancel();
        return;
      }
    }
  } catch {}
}

/**
 * Streams workspace path `rel` (a file or a directory, with everything under it) as a
 * tar archive, made by `tar` in the jail with the workspace read-only; symlinks are
 * archived as links, never followed. Every entry is owned by uid and gid 0 with no user
 * or group name, so nothing of the host's accounts shows.
 * @example return new Response(await downloadTar(place, "src"));
 */
export async function downloadTar(
  place: TarPlace,
  rel: string,
): Promise<ReadableStream<Uint8Array>> {
  const abs = await place.workspace.resolve(rel);
  await stat(abs).catch(() => {
    throw new SandboxError("not_found", `no '${rel}' in the workspace`);
  });
  const name = place.workspace.relative(abs) || ".";
  const root = place.workspace.root;
  const plan = place.jail.wrap({
    // Entries name no user of the host: uid and gid 0, no names (a neutral owner).
    argv: [
      tarPath(),
      "-c",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "-f",
      "-",
      "-C",
      place.jail.pathInside(root),
      "--",
      name,
    ],
    cwd: root,
    writable: false,
  });
  const child = spawn(plan.file, plan.args, {
    env: plan.env,
    stdio: ["ignore", "pipe", "ignore", plan.statusFd ? "pipe" : "ignore"],
  });
  (child.stdio[3] as Readable | null)?.resume();
  child.once("exit", () => plan.release());
  return Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>;
}

function tarPath(): string {
  const tar = findExecutable("tar");
  if (!tar) throw new SandboxError("internal", "'tar' is not installed on the sandbox host");
  return tar;
}

async function jailedTar(jail: Jail, args: string[], cwd: string, archive: string): Promise<void> {
  const plan = jail.wrap({ argv: [tarPath(), ...args], cwd, writable: true });
  // The archive reaches tar as its stdin: nothing outside the workspace is mounted in.
  const input = await open(archive, "r");
  const child = spawn(plan.file, plan.args, {
    env: plan.env,
    stdio: [input.fd, "ignore", "pipe", plan.statusFd ? "pipe" : "ignore"],
  });
  void input.close();
  (child.stdio[3] as Readable | null)?.resume();
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (text: string) => {
    if (stderr.length < 4096) stderr += text;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  plan.release();
  if (code !== 0) throw new ExtractError(stderr.trim() || `tar exited with ${code}`);
}

class ExtractError extends Error {}

function uploadError(err: unknown): unknown {
  if (err instanceof SandboxError) return err;
  if (err instanceof TarRefusal) {
    return new SandboxError("bad_request", `upload refused, nothing was written: ${err.message}`);
  }
  const message = (err as Error).message ?? String(err);
  if ((err as NodeJS.ErrnoException).code === "ENOSPC" || /No space left|quota/i.test(message)) {
    return new SandboxError(
      "insufficient_storage",
      `upload does not fit the sandbox's disk quota (${firstLine(message)}); make room or create the sandbox with a larger limits.diskBytes`,
    );
  }
  if (err instanceof ExtractError) {
    return new SandboxError(
      "bad_request",
      `tar could not extract the archive: ${firstLine(message)}`,
    );
  }
  return err;
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}
