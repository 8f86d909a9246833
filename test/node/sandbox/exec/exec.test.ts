import { execSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpillFolder } from "../../../../sandbox/spill-folder.ts";
import { utf8ByteLength } from "../../../../src/core/retention/index.ts";
import { SandboxClient, SandboxHttpError } from "../../../../src/execenv/index.ts";
import {
  applyUpdate,
  execId,
  type Folded,
  fold,
  markedProcesses,
  sha256OfCommand,
  sha256OfFile,
  spillOnHost,
  startTestHost,
  type TestHost,
} from "../harness.ts";

/** The harness's SIGTERM → SIGKILL grace. */
const GRACE_MS = 300;

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

function run(command: string, extra: Record<string, unknown> = {}): Promise<Folded> {
  return fold(host.client.exec({ execId: execId(), command, ...extra }));
}

/** The replica's text is what the metadata says it is. */
function expectConsistent(f: Folded): void {
  expect(f.metadata).not.toBeNull();
  expect(utf8ByteLength(f.text)).toBe(f.metadata!.outputBytes);
}

describe("exec: output bounded at the source", () => {
  it("seq 1 200000 keeps the last 2000 lines, exact totals, spill equals the full output", async () => {
    const f = await run("seq 1 200000");
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    const expected = `${Array.from({ length: 2000 }, (_, i) => 198001 + i).join("\n")}\n`;
    expect(f.text).toBe(expected);
    expect(f.metadata).toMatchObject({
      truncated: true,
      truncatedBy: "lines",
      totalLines: 200000,
      totalBytes: 1288895,
      outputLines: 2000,
      lastLinePartial: false,
    });
    expectConsistent(f);
    const spill = spillOnHost(host, f.metadata!.spillPath!);
    expect(f.metadata!.spillPath).toMatch(/^\/toolwire\/spill\/.+\.log$/);
    expect(await sha256OfFile(spill)).toBe(sha256OfCommand("seq 1 200000"));
  });

  it("yes | head -c 50000000: 25M lines counted, spill byte for byte", async () => {
    const command = "yes | head -c 50000000";
    const f = await run(command);
    expect(f.exit?.exitCode).toBe(0);
    expect(f.text).toBe("y\n".repeat(2000));
    expect(f.metadata).toMatchObject({
      totalLines: 25_000_000,
      totalBytes: 50_000_000,
      truncated: true,
    });
    expectConsistent(f);
    expect(await sha256OfFile(spillOnHost(host, f.metadata!.spillPath!))).toBe(
      sha256OfCommand(command),
    );
  });

  it("output within the caps is complete and creates no spill file", async () => {
    const id = execId();
    const f = await fold(host.client.exec({ execId: id, command: "seq 1 2000" }));
    expect(f.metadata).toMatchObject({ truncated: false, totalLines: 2000, outputLines: 2000 });
    expect(f.metadata!.spillPath).toBeUndefined();
    expect(existsSync(path.join(host.spillDir, `${id}.log`))).toBe(false);
  });

  it("one line past the line cap truncates and spills the whole stream", async () => {
    const f = await run("seq 1 2001");
    expect(f.text).toBe(`${Array.from({ length: 2000 }, (_, i) => i + 2).join("\n")}\n`);
    expect(f.metadata).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 2001 });
    expect(await sha256OfFile(spillOnHost(host, f.metadata!.spillPath!))).toBe(
      sha256OfCommand("seq 1 2001"),
    );
  });

  it("byte cap: exactly maxBytes is kept whole, one byte more truncates", async () => {
    const at = await run("head -c 99 /dev/zero | tr '\\0' a; echo", { limits: { maxBytes: 100 } });
    expect(at.metadata).toMatchObject({ truncated: false, totalBytes: 100 });
    const over = await run("head -c 100 /dev/zero | tr '\\0' a; echo", {
      limits: { maxBytes: 100 },
    });
    expect(over.metadata).toMatchObject({ truncated: true, truncatedBy: "bytes", totalBytes: 101 });
    expect(over.metadata!.lastLinePartial).toBe(true);
    expect(utf8ByteLength(over.text)).toBe(100);
  });

  it("a long single line keeps its last maxBytes bytes (tail) or its first (head)", async () => {
    const command = "head -c 200000 /dev/zero | tr '\\0' x";
    const tail = await run(command);
    expect(tail.text).toBe("x".repeat(51200));
    expect(tail.metadata).toMatchObject({
      totalLines: 1,
      totalBytes: 200000,
      truncatedBy: "bytes",
      lastLinePartial: true,
    });
    const head = await run(command, { limits: { retain: "head" } });
    expect(head.text).toBe("x".repeat(51200));
    expect(head.metadata).toMatchObject({ totalBytes: 200000, firstLineExceedsLimit: true });
    expect(await sha256OfFile(spillOnHost(host, head.metadata!.spillPath!))).toBe(
      sha256OfCommand(command),
    );
  });

  it("head mode keeps the first lines and still counts everything", async () => {
    const f = await run("seq 1 100000", { limits: { retain: "head", maxLines: 10 } });
    expect(f.text).toBe(`${Array.from({ length: 10 }, (_, i) => i + 1).join("\n")}\n`);
    expect(f.metadata).toMatchObject({ truncated: true, totalLines: 100000, totalBytes: 588895 });
  });

  it("keeps multibyte characters whole when a stream splits them across writes", async () => {
    // "€" (e2 82 ac) and "😀" (f0 9f 98 80) arrive in pieces, written separately.
    const command = [
      "printf '\\342\\202'",
      "sleep 0.1",
      "printf '\\254|\\360'",
      "sleep 0.1",
      "printf '\\237\\230'",
      "sleep 0.1",
      "printf '\\200\\n'",
    ].join("; ");
    const f = await run(command);
    expect(f.text).toBe("€|😀\n");
    expect(f.metadata).toMatchObject({ totalBytes: 9, totalLines: 1 });
  });

  it("stderr written inside a character shows where it came, as in the spill file (true order)", async () => {
    // stdout and stderr are one file: "E" lands between the bytes of "€", which then
    // decode as U+FFFD on each side; the window is what the spill file holds.
    const f = await run(
      "printf '\\342\\202'; sleep 0.1; printf 'E' >&2; sleep 0.1; printf '\\254\\n'",
    );
    expect(f.text).toBe("\uFFFDE\uFFFD\n");
    expect(f.metadata).toMatchObject({ totalBytes: 5, totalLines: 1 });
  });

  it("invalid UTF-8 shows as U+FFFD while totals count the raw bytes, and the spill keeps those bytes", async () => {
    const f = await run("printf 'a\\377\\376b\\n'");
    expect(f.text).toBe("a\uFFFD\uFFFDb\n");
    expect(f.metadata).toMatchObject({ totalBytes: 5, totalLines: 1, outputBytes: 9 });
    expect(f.metadata?.truncated).toBe(false);
    const raw = readFileSync(spillOnHost(host, f.metadata!.spillPath!));
    expect(raw.equals(Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a]))).toBe(true);
    const plain = await run("echo plain");
    expect(plain.metadata?.spillPath).toBeUndefined();
  });

  it("the spill file is readable and searchable with read and grep", async () => {
    const f = await run("seq 1 5000");
    const spillPath = f.metadata!.spillPath!;
    const r = await host.client.read({ path: spillPath, offset: 4999 });
    expect(r).toMatchObject({ lines: ["4999", "5000"], totalLines: 5000 });
    const g = await host.client.grep({ pattern: "^123$", path: spillPath });
    expect(g.matches).toEqual([{ path: spillPath, line: 123, text: "123" }]);
  });

  it("stdout and stderr feed one view in arrival order", async () => {
    const f = await run("echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three");
    expect(f.text).toBe("one\ntwo\nthree\n");
  });

  it("runs the command with bash: brace expansion, [[ ]], arrays and $BASH_VERSION work", async () => {
    const f = await run(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a JS template
      'echo {1..3}; [[ "ab" == a* ]] && echo match; a=(x y z); echo "${#a[@]} ${a[1]}"; [[ -n $BASH_VERSION ]] && echo bash',
    );
    expect(f.text).toBe("1 2 3\nmatch\n3 y\nbash\n");
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
  });

  it("reports a failing command's exit code with its output", async () => {
    const f = await run("echo oops >&2; exit 3");
    expect(f.exit).toEqual({ kind: "exit", exitCode: 3 });
    expect(f.text).toBe("oops\n");
  });

  it("runs in cwd with env, without the host's token", async () => {
    process.env.SANDBOX_TOKEN = "host-secret-that-commands-must-not-see";
    const other = await startTestHost();
    delete process.env.SANDBOX_TOKEN;
    try {
      mkdirSync(path.join(other.root, "sub"), { recursive: true });
      const f = await fold(
        other.client.exec({
          execId: execId(),
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a JS template
          command: 'pwd; echo "$GREETING"; echo "token=$SANDBOX_TOKEN"; echo "path=${PATH:+set}"',
          cwd: "sub",
          env: { GREETING: "hello" },
        }),
      );
      // The jail shows the workspace at /workspace, whatever the host's folder (decision 243).
      expect(f.text).toBe("/workspace/sub\nhello\ntoken=\npath=set\n");
    } finally {
      await other.close();
    }
  });
});

describe("exec: output goes through a pipe and a copier into the spill file", () => {
  it("stdout and stderr are one pipe: /dev/stdout can be opened again, and nothing is lost or reordered", async () => {
    const f = await run(
      "[ -p /dev/stdout ] && echo pipe; echo two > /dev/stdout; echo three >&2; echo four > /dev/stderr; echo five",
    );
    expect(f.text).toBe("pipe\ntwo\nthree\nfour\nfive\n");
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
  });

  it("execs that run at once keep their own totals, though copier threads pass from one to the next", async () => {
    // A copier thread goes back to the pool at its EOF, often before the command's exit
    // is seen, and the next exec may take it at once.
    const sizes = [1, 300_000, 20, 150_000, 5, 80_000, 2, 40_000, 1, 200_000, 3, 10_000];
    const runs = await Promise.all(
      sizes.map((n, i) => run(i % 2 ? `seq 1 ${n}` : `seq 1 ${n}; sleep 0.${i}`)),
    );
    for (const [i, f] of runs.entries()) {
      const n = sizes[i]!;
      expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
      expect(f.metadata?.totalLines).toBe(n);
      expect(f.metadata?.totalBytes).toBe(
        Buffer.byteLength(Array.from({ length: n }, (_, k) => `${k + 1}\n`).join("")),
      );
      expect(f.text.endsWith(`${n}\n`)).toBe(true);
    }
  });

  it("a copier thread keeps its process alive while it copies, and not once it is idle", async () => {
    // A process whose only work is one exec: it must see the exit (a running copier
    // holds the event loop), then end by itself (an idle one in the pool does not).
    const dir = mkdtempSync(path.join(tmpdir(), "toolwire-idle-"));
    const module = (name: string) =>
      JSON.stringify(fileURLToPath(new URL(`../../../../sandbox/${name}`, import.meta.url)));
    const script = `
      import { ExecRun } from ${module("exec/exec-run.ts")};
      import { Jail } from ${module("jail/jail.ts")};
      import { DEFAULT_COMMAND_LIMITS } from ${module("jail/limits.ts")};
      import { SpillFolder } from ${module("spill-folder.ts")};
      const root = ${JSON.stringify(dir)};
      const spills = new SpillFolder(root + ".spill", root);
      const jail = new Jail(root, { isolation: "none", network: false, limits: DEFAULT_COMMAND_LIMITS, cgroups: null });
      const run = new ExecRun({ execId: "idle", command: "sleep 0.3; echo done", cwd: root, env: {}, jail,
        spills, killGraceMs: 500, maxSpillBytes: 1 << 20 });
      run.subscribe(() => { if (run.exit) console.log(JSON.stringify({ text: run.text, exit: run.exit })); });
      run.start();
    `;
    try {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (piece: string) => {
        out += piece;
      });
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve(null);
        }, 4000);
        child.once("exit", (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(code).toBe(0);
      expect(JSON.parse(out)).toEqual({ text: "done\n", exit: { kind: "exit", exitCode: 0 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.spill`, { recursive: true, force: true });
    }
  });

  it("a command that ignores SIGTERM and SIGPIPE and writes on past the cap leaves exactly the cap on disk", async () => {
    const capped = await startTestHost({ maxSpillBytes: 256 * 1024, killGraceMs: 1500 });
    try {
      const id = execId();
      const file = path.join(capped.spillDir, `${id}.log`);
      // The largest the file gets while the command ignores its stop (the grace before
      // SIGKILL): the copier writes exactly the cap and stops, so the command's writes fail.
      let largest = 0;
      const sampler = setInterval(() => {
        try {
          largest = Math.max(largest, statSync(file).size);
        } catch {}
      }, 5);
      const f = await fold(
        capped.client.exec({
          execId: id,
          command: "trap '' TERM PIPE; while :; do head -c 65536 /dev/zero | tr '\\0' x; done",
        }),
      ).finally(() => clearInterval(sampler));
      expect(largest).toBeLessThanOrEqual(256 * 1024);
      expect(f.exit?.error).toBe(
        `output reached the 256 KiB limit; the command was stopped; everything up to there is in /toolwire/spill/${id}.log`,
      );
      expect(f.metadata?.totalBytes).toBe(256 * 1024);
      const spill = readFileSync(file);
      expect(spill.equals(Buffer.alloc(256 * 1024, "x"))).toBe(true);
    } finally {
      await capped.close();
    }
  });

  it("unjailed, a background job cannot hold the exec open: it ends with its shell", async () => {
    const unjailed = await startTestHost({ isolation: "none" });
    const mark = `bg-${randomBytes(4).toString("hex")}`;
    try {
      const started = performance.now();
      const f = await fold(
        unjailed.client.exec({
          execId: execId(),
          command: "sleep 30 & echo started",
          env: { TOOLWIRE_MARK: mark },
        }),
      );
      expect(f.text).toBe("started\n");
      expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
      // Well under the 30 s the background job would hold the pipe for.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(await markedGone(mark, 2000)).toEqual([]);
    } finally {
      await unjailed.close();
    }
  });
});

describe("exec: timeouts, kill, process groups", () => {
  it("a timeout terminates the whole process group", async () => {
    const id = execId();
    const f = await fold(
      host.client.exec({
        execId: id,
        command: "sleep 300 & echo started; wait",
        env: { TOOLWIRE_MARK: id },
        timeoutSec: 0.5,
      }),
    );
    expect(f.text).toBe("started\n");
    expect(f.exit?.exitCode).toBeNull();
    expect(f.exit?.signal).toBe("SIGTERM");
    expect(f.exit?.error).toMatch(/timed out after 0.5 s/);
    expect(await markedGone(id, GRACE_MS + 2000)).toEqual([]);
  });

  it("a kill while the jail is still being set up leaves no process behind", async () => {
    // Killed before it reports its PID 1, the jail's outer bubblewrap may die while its
    // child still waits for it; that child must not live on, holding the output pipe.
    const mark = execId();
    for (let round = 0; round < 25; round++) {
      const id = execId();
      const stream = host.client
        .exec({
          execId: id,
          command: "sleep 30",
          env: { TOOLWIRE_MARK: mark },
        })
        [Symbol.asyncIterator]();
      await stream.next();
      await host.client.kill(id);
      while (!(await stream.next()).done) {}
    }
    expect(await markedGone(mark, GRACE_MS + 2000)).toEqual([]);
  });

  it("kill stops a running command; SIGKILL follows when SIGTERM is ignored", async () => {
    const id = execId();
    const stream = host.client.exec({
      execId: id,
      command: "trap '' TERM; echo ready; while :; do sleep 0.05; done",
    });
    const f: Folded = { updates: [], text: "", metadata: null, exit: null };
    for await (const u of stream) {
      applyUpdate(f, u);
      if (f.text.includes("ready")) break;
    }
    expect(await host.client.kill(id)).toEqual({ execId: id, status: "killing" });
    await fold(host.client.reattach(id), f);
    expect(f.exit?.signal).toBe("SIGKILL");
    expect(f.exit?.error).toMatch(/killed on request/);
    expect(await host.client.kill(id)).toEqual({ execId: id, status: "exited" });
  });

  it("a timeout kills members that ignore SIGTERM and hold no pipe, though the shell exited first", async () => {
    const id = execId();
    const f = await fold(
      host.client.exec({
        execId: id,
        command: `sh -c "trap '' TERM; sleep 300" >/dev/null 2>&1 & sleep 300`,
        env: { TOOLWIRE_MARK: id },
        timeoutSec: 0.5,
      }),
    );
    expect(f.updates.filter((u) => u.kind === "exit")).toHaveLength(1);
    expect(f.exit?.error).toMatch(/timed out after 0.5 s/);
    expect(await markedGone(id, GRACE_MS + 2000)).toEqual([]);
  });

  it("kill reaches a background member that ignores SIGTERM and holds no pipe", async () => {
    const id = execId();
    const stream = host.client.exec({
      execId: id,
      command: "(trap '' TERM; sleep 300 >/dev/null 2>&1 &); echo ready; sleep 300",
      env: { TOOLWIRE_MARK: id },
    });
    const f: Folded = { updates: [], text: "", metadata: null, exit: null };
    for await (const u of stream) {
      applyUpdate(f, u);
      if (f.text.includes("ready")) break;
    }
    expect(await markedGone(id, 0)).not.toEqual([]);
    await host.client.kill(id);
    await fold(host.client.reattach(id), f);
    // SIGTERM ends the shell; on a loaded machine the jail may take longer than the
    // 300 ms grace to go, and the SIGKILL after it is then what it died of (CI met it once).
    expect(["SIGTERM", "SIGKILL"]).toContain(f.exit?.signal);
    expect(f.updates.filter((u) => u.kind === "exit")).toHaveLength(1);
    expect(await markedGone(id, GRACE_MS + 2000)).toEqual([]);
  });
});

describe("exec: host shutdown", () => {
  it("closing the host terminates running process groups before it returns", async () => {
    const other = await startTestHost();
    const id = execId();
    const stream = other.client.exec({
      execId: id,
      command: "sleep 300 & echo started; wait",
      env: { TOOLWIRE_MARK: id },
    });
    const f: Folded = { updates: [], text: "", metadata: null, exit: null };
    for await (const u of stream) {
      applyUpdate(f, u);
      if (f.text.includes("started")) break;
    }
    expect(await markedGone(id, 0)).not.toEqual([]);
    await other.close();
    expect(await markedGone(id, 0)).toEqual([]);
  });

  it("closing the host kills a member that ignores SIGTERM and holds no pipe", async () => {
    const other = await startTestHost();
    const id = execId();
    const stream = other.client.exec({
      execId: id,
      command: `sh -c "trap '' TERM; sleep 300" >/dev/null 2>&1 & echo started; sleep 300`,
      env: { TOOLWIRE_MARK: id },
    });
    const f: Folded = { updates: [], text: "", metadata: null, exit: null };
    for await (const u of stream) {
      applyUpdate(f, u);
      if (f.text.includes("started")) break;
    }
    await other.close();
    expect(await markedGone(id, GRACE_MS + 2000)).toEqual([]);
  });
});

describe("exec: reattach", () => {
  it("a second consumer joins mid-stream with a replace base and sees the same end", async () => {
    const id = execId();
    const command = "for i in $(seq 1 30); do echo line $i; sleep 0.02; done";
    const first = host.client.exec({ execId: id, command });
    const head = await first.next();
    expect(head.value?.kind).toBe("replace");
    await first.return(undefined);
    const later = await fold(host.client.reattach(id));
    expect(later.updates[0]!.kind).toBe("replace");
    expect(later.exit?.exitCode).toBe(0);
    expect(later.text).toBe(Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join(""));
    const after = await fold(host.client.reattach(id));
    expect(after.updates.map((u) => u.kind)).toEqual(["replace", "exit"]);
    expect(after.text).toBe(later.text);
  });

  it("refuses a second exec with the same id, and unknown ids", async () => {
    const id = execId();
    await fold(host.client.exec({ execId: id, command: "true" }));
    await expect(fold(host.client.exec({ execId: id, command: "true" }))).rejects.toMatchObject({
      status: 409,
      code: "conflict",
    });
    await expect(fold(host.client.reattach("nope"))).rejects.toBeInstanceOf(SandboxHttpError);
    await expect(host.client.kill("nope")).rejects.toMatchObject({ status: 404 });
  });
});

describe("exec: the spill file is out of the command's reach", () => {
  it("a symlink, hard link, FIFO or folder planted in the workspace's .toolwire/spill changes nothing", async () => {
    const outside = mkdtempSync(path.join(tmpdir(), "toolwire-outside-"));
    try {
      const victim = path.join(outside, "victim.txt");
      writeFileSync(victim, "keep me\n");
      const dir = path.join(host.root, ".toolwire/spill");
      mkdirSync(dir, { recursive: true });
      const ids = [execId(), execId(), execId(), execId()];
      symlinkSync(victim, path.join(dir, `${ids[0]}.log`));
      // A name outside cannot be hard-linked into the workspace's own mount (EXDEV): the
      // hard link's other name is in the workspace.
      const twin = path.join(host.root, "twin.txt");
      writeFileSync(twin, "keep me too\n");
      linkSync(twin, path.join(dir, `${ids[1]}.log`));
      execSync(`mkfifo ${path.join(dir, `${ids[2]}.log`)}`);
      mkdirSync(path.join(dir, `${ids[3]}.log`));
      for (const id of ids) {
        const f = await fold(host.client.exec({ execId: id, command: "seq 1 100000" }));
        expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
        expect(f.metadata?.spillPath).toBe(`/toolwire/spill/${id}.log`);
        expect(await sha256OfFile(spillOnHost(host, f.metadata!.spillPath!))).toBe(
          sha256OfCommand("seq 1 100000"),
        );
      }
      expect(readFileSync(victim, "utf8")).toBe("keep me\n");
      expect(readFileSync(twin, "utf8")).toBe("keep me too\n");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("a workspace .toolwire symlinked out of the workspace changes nothing", async () => {
    const other = await startTestHost();
    const outside = mkdtempSync(path.join(tmpdir(), "toolwire-outside-"));
    try {
      symlinkSync(outside, path.join(other.root, ".toolwire"));
      const f = await fold(other.client.exec({ execId: execId(), command: "seq 1 100000" }));
      expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      await other.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("the jail sees the spill read-only at its published path: cat works, writes, appends, renames and removal fail", async () => {
    const f = await fold(host.client.exec({ execId: execId(), command: "seq 1 100000" }));
    const spillPath = f.metadata!.spillPath!;
    const tamper = await fold(
      host.client.exec({
        execId: execId(),
        command: `tail -n 1 ${spillPath}; echo x >> ${spillPath}; echo x > ${spillPath}; mv ${spillPath} /toolwire/spill/moved.log; rm -f ${spillPath}; ln -s /etc/passwd /toolwire/spill/planted.log; ls /toolwire/spill | grep -c planted`,
      }),
    );
    expect(tamper.text).toMatch(/^100000\n/);
    expect(tamper.text.match(/Read-only file system/g)?.length).toBeGreaterThanOrEqual(5);
    expect(tamper.text).toMatch(/\n0\n$/);
    expect(await sha256OfFile(spillOnHost(host, spillPath))).toBe(sha256OfCommand("seq 1 100000"));
  });

  it("a plain file left at the spill name by an earlier exec of the same id is replaced", async () => {
    const id = execId();
    writeFileSync(path.join(host.spillDir, `${id}.log`), "left over from before\n".repeat(5000));
    const f = await fold(host.client.exec({ execId: id, command: "seq 1 100000" }));
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(f.metadata).toMatchObject({ totalLines: 100000, totalBytes: 588895 });
    expect(await sha256OfFile(spillOnHost(host, f.metadata!.spillPath!))).toBe(
      sha256OfCommand("seq 1 100000"),
    );
  });

  it("a spill folder inside the workspace, or holding it, is refused", () => {
    for (const folder of [path.join(host.root, "spill"), host.root, path.dirname(host.root)]) {
      expect(() => new SpillFolder(folder, host.root)).toThrow(
        /SANDBOX_SPILL_DIR .* must lie outside the workspace/,
      );
    }
  });
});

describe("exec: spill failures fail the command", () => {
  it("a host under a 1 MiB file size limit stops the command's output there and says so", async () => {
    // The host's own limit binds the copier that writes the spill file (it runs outside
    // the jail, under the host's limits): the command is stopped at 1 MiB, everything up
    // to there kept.
    const root = mkdtempSync(path.join(tmpdir(), "toolwire-fsize-"));
    const token = randomBytes(24).toString("hex");
    const main = fileURLToPath(new URL("../../../../sandbox/main.ts", import.meta.url));
    const child = spawn("prlimit", ["--fsize=1048576", process.execPath, main], {
      env: { PATH: process.env.PATH, SANDBOX_TOKEN: token, PORT: "0", SANDBOX_ROOT: root },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (text: string) => {
          const m = /listening on (http:\/\/\S+)/.exec(text);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`host exited (${code})`)));
      });
      const client = new SandboxClient(url, token);
      const f = await fold(client.exec({ execId: execId(), command: "seq 1 10000000" }));
      expect(f.exit?.error).toMatch(
        /^output reached the 1 MiB limit; the command was stopped; everything up to there is in \/toolwire\/spill\/.+\.log$/,
      );
      expect(f.metadata?.totalBytes).toBe(1024 * 1024);
      expect(f.exit?.exitCode).not.toBe(0);
    } finally {
      // The host unmounts its workspace's nosuid bind as it stops (decision 240).
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      if (child.exitCode === null && child.signalCode === null) await exited;
      rmSync(root, { recursive: true, force: true });
      rmSync(`${root}.spill`, { recursive: true, force: true });
    }
  });
});

/**
 * Waits up to `waitMs` for every process started with TOOLWIRE_MARK=`mark` in its
 * environment to be gone (pids inside a jail mean nothing on the host, so the test
 * finds the command's processes by what the host can see of them), then returns the
 * host pids still alive. Survivors are SIGKILLed afterwards so a failing test leaks nothing.
 */
async function markedGone(mark: string, waitMs: number): Promise<number[]> {
  const deadline = Date.now() + waitMs;
  let alive = markedProcesses(mark);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    alive = markedProcesses(mark);
  }
  if (alive.length > 0 && waitMs > 0) for (const pid of alive) process.kill(pid, "SIGKILL");
  return alive;
}
