import { mkdtempSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  AHEAD_SPEC_MAX_BYTES,
  type AheadCommand,
  DEFAULT_AHEAD_MS,
  JailAhead,
  type TakenJail,
} from "../../../../sandbox/exec/jail-ahead.ts";
import { Jail } from "../../../../sandbox/jail/jail.ts";
import { DEFAULT_COMMAND_LIMITS } from "../../../../sandbox/jail/limits.ts";
import { sandboxesConfigFromEnv } from "../../../../sandbox/sandboxes/config.ts";
import { spawnedProcesses, spawnedProcessesReach } from "../harness.ts";

const root = mkdtempSync(path.join(tmpdir(), "toolwire-ahead-"));
const jail = new Jail(root, {
  isolation: "bwrap",
  network: false,
  limits: DEFAULT_COMMAND_LIMITS,
  cgroups: null,
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waiting(ahead: JailAhead): Promise<void> {
  for (let waited = 0; !ahead.waiting && waited < 10_000; waited += 20) await sleep(20);
  expect(ahead.waiting).toBe(true);
}

/** Reads the taken jail's output to its end (the pipe's read end is blocking: fine once it exited). */
async function outputOf(taken: TakenJail): Promise<string> {
  await taken.exited;
  const buffer = Buffer.alloc(1 << 16);
  let text = "";
  for (;;) {
    const n = readSync(taken.outputFd, buffer);
    if (n === 0) return text;
    text += buffer.toString("utf8", 0, n);
  }
}

/** A command whose spec is exactly `bytes` long: the folder, the command, each `NAME=value`, each ended by a NUL. */
function commandOf(bytes: number): AheadCommand {
  const env = jail.commandEnv();
  const cwd = "/workspace";
  const fixed = [cwd, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].reduce(
    (sum, field) => sum + Buffer.byteLength(field) + 1,
    0,
  );
  const prefix = "echo ran #";
  const command = prefix + "x".repeat(bytes - fixed - 1 - prefix.length);
  return { cwd, command, env };
}

describe("JailAhead", () => {
  it("takes a command at, and under, the longest spec it is handed; over it, the jail is ended and the caller starts its own", async () => {
    for (const bytes of [AHEAD_SPEC_MAX_BYTES - 1, AHEAD_SPEC_MAX_BYTES]) {
      const ahead = new JailAhead(jail, root);
      ahead.start();
      await waiting(ahead);
      const taken = ahead.take(commandOf(bytes));
      expect(taken, `${bytes} bytes`).not.toBeNull();
      expect(await outputOf(taken!)).toBe("ran\n");
      expect((await taken!.exited).code).toBe(0);
      taken!.jailed.release();
    }
    const ahead = new JailAhead(jail, root);
    ahead.start();
    await waiting(ahead);
    expect(ahead.take(commandOf(AHEAD_SPEC_MAX_BYTES + 1))).toBeNull();
    expect(ahead.waiting).toBe(false);
    expect(ahead.take(commandOf(400))).toBeNull();
  });

  it("refuses what bash could not be handed whole (a NUL, a name with '=' or none) and ends the jail", async () => {
    const bads: Omit<AheadCommand, "cwd">[] = [
      { command: "echo a\0b", env: {} },
      { command: "true", env: { "A=B": "c" } },
      { command: "true", env: { "": "c" } },
    ];
    for (const bad of bads) {
      const ahead = new JailAhead(jail, root);
      ahead.start();
      await waiting(ahead);
      expect(ahead.take({ cwd: "/workspace", ...bad })).toBeNull();
      expect(ahead.waiting).toBe(false);
    }
  });

  it("kills a jail not taken within its lifetime, and ends one at once on end()", async () => {
    const before = await spawnedProcessesReach(0);
    const ahead = new JailAhead(jail, root);
    ahead.start(300);
    await waiting(ahead);
    expect(spawnedProcesses()).toBe(before + 1);
    expect(await spawnedProcessesReach(before)).toBe(before);
    expect(ahead.waiting).toBe(false);
    expect(ahead.take(commandOf(400))).toBeNull();

    const ended = new JailAhead(jail, root);
    ended.start();
    await waiting(ended);
    await ended.end();
    expect(ended.waiting).toBe(false);
    // end() answers once the jail has exited: nothing of it is left to wait for.
    expect(spawnedProcesses()).toBe(before);
  });

  it("an exec that comes while the jail is being spawned waits for the spawn and takes it", async () => {
    const ahead = new JailAhead(jail, root);
    ahead.start();
    expect(ahead.waiting).toBe(false);
    await ahead.started();
    const taken = ahead.take(commandOf(400));
    expect(taken).not.toBeNull();
    expect(await outputOf(taken!)).toBe("ran\n");
    taken!.jailed.release();
  });

  it("holds at most two jails on a host: a third sandbox gets none until one is taken or ended", async () => {
    const [a, b, c] = [0, 1, 2].map(() => new JailAhead(jail, root)) as [
      JailAhead,
      JailAhead,
      JailAhead,
    ];
    a.start();
    b.start();
    c.start();
    expect(c.pending).toBe(false);
    await waiting(a);
    await waiting(b);
    const taken = a.take(commandOf(400));
    expect(taken).not.toBeNull();
    const d = new JailAhead(jail, root);
    d.start();
    await waiting(d);
    const e = new JailAhead(jail, root);
    e.start();
    expect(e.pending).toBe(false);
    await b.end();
    const f = new JailAhead(jail, root);
    f.start();
    await waiting(f);
    await Promise.all([d.end(), f.end(), taken!.exited]);
    taken!.jailed.release();
  });

  it("ends a jail still being started: end() waits for it, and nothing is left waiting", async () => {
    const before = await spawnedProcessesReach(0);
    const ahead = new JailAhead(jail, root);
    ahead.start();
    await ahead.end();
    expect(ahead.waiting).toBe(false);
    expect(spawnedProcesses()).toBe(before);
  });
});

describe("SANDBOX_JAIL_AHEAD_MS", () => {
  const config = (value?: string) =>
    sandboxesConfigFromEnv(
      value === undefined ? {} : { SANDBOX_JAIL_AHEAD_MS: value },
      "/srv/workspace",
      DEFAULT_COMMAND_LIMITS,
    );

  it("is 10 s by default; 0 starts no jail ahead", async () => {
    expect(config().jailAheadMs).toBe(DEFAULT_AHEAD_MS);
    expect(DEFAULT_AHEAD_MS).toBe(10_000);
    expect(config("2500").jailAheadMs).toBe(2500);
    expect(config("0").jailAheadMs).toBe(0);
    const before = await spawnedProcessesReach(0);
    const ahead = new JailAhead(jail, root);
    ahead.start(0);
    expect(ahead.pending).toBe(false);
    expect(ahead.take(commandOf(400))).toBeNull();
    expect(spawnedProcesses()).toBe(before);
  });

  it("anything but a whole number from 0 stops the host at start, naming the setting", () => {
    for (const bad of ["-1", "soon", "1.5"]) {
      expect(() => config(bad)).toThrow(
        `SANDBOX_JAIL_AHEAD_MS must be a whole number from 0, got '${bad}'`,
      );
    }
  });
});
