// The spawner (decision 259): real processes started by the real python3 spawner, as the
// host starts a command's jail with it.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAPTURED_MAX_BYTES, Spawner, type SpawnPlan } from "../../../../sandbox/exec/spawner.ts";

const run = promisify(execFile);

let dir: string;
let spawner: Spawner;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolwire-spawner-"));
  const started = Spawner.start();
  if (!started) throw new Error("these tests need python3 on PATH");
  spawner = started;
});
afterAll(() => {
  spawner.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * `sh -c script`, its output (stdout and stderr) into `<dir>/<name>`, made empty first: the
 * child opens what is there, never makes a file (the host's are its FIFOs).
 */
function shell(script: string, name: string, extra: Partial<SpawnPlan> = {}): SpawnPlan {
  writeFileSync(path.join(dir, name), "");
  return {
    file: "/bin/sh",
    args: ["-c", script],
    env: { PATH: "/usr/bin:/bin", WHO: "spawned" },
    cwd: dir,
    open: [
      [0, "/dev/null", "r"],
      [1, path.join(dir, name), "w"],
    ],
    dup: [[2, 1]],
    ...extra,
  };
}

describe("the spawner", () => {
  it("starts a command with its arguments, environment and directory, and tells its exit code", async () => {
    const child = await spawner.spawn(
      shell('echo "$0 $WHO $(pwd)"; echo to-stderr >&2; exit 7', "basics"),
    );
    expect(child.pid).toBeGreaterThan(1);
    expect(await child.exited).toEqual({ code: 7, signal: null });
    expect(readFileSync(path.join(dir, "basics"), "utf8")).toBe(
      `/bin/sh spawned ${dir}\nto-stderr\n`,
    );
  });

  it("is in a process group of its own: a signal to the host's group leaves it to the host's shutdown", () => {
    const groupOf = (pid: number | string) =>
      readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[2];
    expect(groupOf(spawner.pid!)).toBe(String(spawner.pid));
    expect(groupOf(spawner.pid!)).not.toBe(groupOf("self"));
  });

  it("stands in / between commands, holding no command's folder (a sandbox's disk unmounts)", async () => {
    const child = await spawner.spawn(shell("exit 0", "cwd"));
    await child.exited;
    expect(readlinkSync(`/proc/${spawner.pid}/cwd`)).toBe("/");
  });

  it("tells the signal that ended a command", async () => {
    const child = await spawner.spawn(shell("kill -TERM $$; sleep 5", "signalled"));
    expect(await child.exited).toEqual({ code: null, signal: "SIGTERM" });
  });

  it("starts each command in a session of its own, with no signal ignored or blocked", async () => {
    const child = await spawner.spawn(
      shell("cat /proc/self/stat; grep -E '^Sig(Ign|Blk)' /proc/self/status", "session"),
    );
    await child.exited;
    const [stat = "", ...masks] = readFileSync(path.join(dir, "session"), "utf8")
      .trim()
      .split("\n");
    // pid (comm) state ppid pgrp session …: its own group and session.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    expect(fields[2]).toBe(String(child.pid));
    expect(fields[3]).toBe(String(child.pid));
    // The 31 standard signals: none ignored (Python ignores SIGPIPE), none blocked.
    for (const line of masks) {
      expect(BigInt(`0x${line.split(/\s+/)[1]}`) & 0x7fffffffn, line).toBe(0n);
    }
  });

  it("gives a command the descriptors it names, and none of the spawner's own", async () => {
    const child = await spawner.spawn(shell("ls -l /proc/self/fd", "fds"));
    await child.exited;
    const links = readFileSync(path.join(dir, "fds"), "utf8");
    expect(links).toMatch(/ 0 -> \/dev\/null\n/);
    expect(links).toContain(` 1 -> ${path.join(dir, "fds")}\n`);
    expect(links).toContain(` 2 -> ${path.join(dir, "fds")}\n`);
    // The spawner talks to the host over two sockets: the command has neither.
    expect(links).not.toContain("socket:");
  });

  it("refuses a program that is not there, saying why, and goes on", async () => {
    await expect(
      spawner.spawn({ ...shell("", "missing"), file: path.join(dir, "no-such-program") }),
    ).rejects.toThrow(/ENOENT/);
    const next = await spawner.spawn(shell("exit 0", "after"));
    expect(await next.exited).toEqual({ code: 0, signal: null });
  });

  it("a spawner that dies: what it started is still seen to end, its exit unknown; it starts no more", async () => {
    const own = Spawner.start();
    if (!own) throw new Error("no python3");
    const child = await own.spawn(shell("sleep 0.5", "orphan"));
    process.kill(own.pid!, "SIGKILL");
    expect(await child.exited).toEqual({ code: null, signal: null });
    await expect(own.spawn(shell("exit 0", "never"))).rejects.toThrow(/spawner/);
    expect(own.alive).toBe(false);
  });

  it("makes FIFOs only the host can open, and refuses a name that is taken", async () => {
    const fifos = [path.join(dir, "fifo-a"), path.join(dir, "fifo-b")];
    await spawner.makeFifos(fifos);
    for (const fifo of fifos) {
      const st = statSync(fifo);
      expect(st.isFIFO()).toBe(true);
      expect(st.mode & 0o777).toBe(0o600);
    }
    await expect(spawner.makeFifos([fifos[0]!])).rejects.toThrow(/EEXIST/);
  });

  it("without python3 there is no spawner", () => {
    expect(Spawner.start(null)).toBeNull();
    // (And the host starts commands itself: the exec tests run either way.)
    expect(execFileSync("/bin/sh", ["-c", "echo ok"], { encoding: "utf8" })).toBe("ok\n");
  });
});

describe("a captured run (the host's own commands, decision 277)", () => {
  it("answers the exit code, stdout and stderr apart; looks the name up on PATH; reads nothing; runs from /", async () => {
    const ran = await spawner.run("sh", [
      "-c",
      'echo "out $(pwd)"; echo err >&2; cat; echo "parent $PPID"; exit 3',
    ]);
    expect(ran).toEqual({
      code: 3,
      signal: null,
      stdout: `out /\nparent ${spawner.pid}\n`,
      stderr: "err\n",
    });
  });

  it("tells the signal that ended it", async () => {
    expect(await spawner.run("sh", ["-c", "kill -TERM $$"])).toMatchObject({
      code: null,
      signal: "SIGTERM",
    });
  });

  it.each([
    ["just under", CAPTURED_MAX_BYTES - 1],
    ["at", CAPTURED_MAX_BYTES],
    ["just over", CAPTURED_MAX_BYTES + 1],
  ])("keeps each stream's first MiB, %s it (%i bytes), and reads the rest away", async (_, n) => {
    const script = `head -c ${n} /dev/zero | tr '\\0' o; head -c ${n} /dev/zero | tr '\\0' e >&2`;
    const ran = await spawner.run("sh", ["-c", script]);
    const kept = Math.min(n, CAPTURED_MAX_BYTES);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("o".repeat(kept));
    expect(ran.stderr).toBe("e".repeat(kept));
  });

  it("answers once the command ends, though a process it left holds its output open", async () => {
    // A unique sleep, so the test finds (and ends) exactly the one it left.
    const left = `sleep 29.${process.pid}`;
    const ran = await spawner.run("sh", ["-c", `${left} & echo left`]);
    try {
      expect(ran).toMatchObject({ code: 0, stdout: "left\n" });
    } finally {
      // pkill fails when nothing matched: the process was there, holding the pipe.
      execFileSync("pkill", ["-f", left]);
    }
  });

  it("refuses what cannot be started, naming why", async () => {
    await expect(spawner.run("no-such-command-toolwire", [])).rejects.toThrow(/ENOENT/);
    await expect(spawner.run("/no/such/file", [])).rejects.toThrow(/ENOENT/);
  });
});

describe("a socket made in a sandbox's network namespace (decision 277)", () => {
  it("listens on 127.0.0.1:<port> inside the namespace only, and is the host's to accept on", async () => {
    const ns = path.join(dir, "ns-listen");
    writeFileSync(ns, "");
    execFileSync("unshare", [`--net=${ns}`, "ip", "link", "set", "lo", "up"]);
    try {
      const server = await spawner.listenIn(ns, 900);
      server.on("connection", (socket) =>
        socket.end("HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhost\n"),
      );
      try {
        const inside = await run("nsenter", [
          `--net=${ns}`,
          "--",
          "curl",
          "-s",
          "http://127.0.0.1:900/",
        ]);
        expect(inside.stdout).toBe("host\n");
        // Not on the host's own loopback: curl cannot connect (exit 7).
        const outside = await run("curl", ["-s", "http://127.0.0.1:900/"]).catch((e) => e);
        expect(outside).toMatchObject({ code: 7 });
        // The spawner stepped back home before anything else: its next command is the host's.
        const home = await spawner.run("readlink", ["/proc/self/ns/net"]);
        expect(home.stdout.trim()).toBe(readlinkSync("/proc/self/ns/net"));
      } finally {
        server.close();
      }
    } finally {
      execFileSync("umount", [ns]);
    }
  });

  it("refuses a namespace that is not there, naming why, and stays home", async () => {
    await expect(spawner.listenIn(path.join(dir, "no-such-ns"), 900)).rejects.toThrow(/ENOENT/);
    const home = await spawner.run("readlink", ["/proc/self/ns/net"]);
    expect(home.stdout.trim()).toBe(readlinkSync("/proc/self/ns/net"));
  });
});
