// write, edit, ls and find on a real sandbox host: results, the size cap at, under and
// over, atomic replace under a jailed reader, containment (symlinks, hard links, paths
// that climb out) with messages that name no host path, and one file's changes in order.
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxHttpError } from "../../../../src/execenv/index.ts";
import { execId, fold, startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
let outside: string;
beforeAll(async () => {
  host = await startTestHost();
  outside = mkdtempSync(path.join(tmpdir(), "toolwire-outside-"));
  writeFileSync(path.join(outside, "secret.txt"), "SECRET\n");
});
afterAll(async () => {
  await host.close();
  rmSync(outside, { recursive: true, force: true });
});

/** "<status> <host message>" of a refused request; fails the test when it succeeds. */
async function refusal(attempt: () => Promise<unknown>): Promise<string> {
  try {
    await attempt();
  } catch (err) {
    if (!(err instanceof SandboxHttpError)) throw err;
    expect(err.reason).not.toContain(host.root);
    expect(err.reason).not.toContain(outside);
    return `${err.status} ${err.reason}`;
  }
  throw new Error("the request was not refused");
}

const onDisk = (rel: string) => readFileSync(path.join(host.root, rel), "utf8");

describe("write", () => {
  it("creates parent folders and reports bytes and lines", async () => {
    expect(await host.client.write({ path: "w/deep/er/a.txt", content: "é\nb\nc" })).toEqual({
      path: "w/deep/er/a.txt",
      bytes: 6,
      lines: 3,
    });
    expect(onDisk("w/deep/er/a.txt")).toBe("é\nb\nc");
    expect(await host.client.write({ path: "w/empty.txt", content: "" })).toMatchObject({
      bytes: 0,
      lines: 0,
    });
  });

  it("replaces a file keeping its mode, and leaves no temporary file behind", async () => {
    writeFileSync(path.join(host.root, "run.sh"), "old\n", { mode: 0o755 });
    await host.client.write({ path: "run.sh", content: "#!/bin/sh\necho new\n" });
    expect(onDisk("run.sh")).toBe("#!/bin/sh\necho new\n");
    const { statSync, readdirSync } = await import("node:fs");
    expect(statSync(path.join(host.root, "run.sh")).mode & 0o777).toBe(0o755);
    expect(readdirSync(host.root).filter((n) => n.includes("toolwire-tmp"))).toEqual([]);
  });

  it("a reader in the jail sees the old file or the new one, never part of one", async () => {
    const a = "a".repeat(300_000);
    const b = "b".repeat(300_000);
    await host.client.write({ path: "atomic.txt", content: a });
    const reader = host.client.exec({
      execId: execId("atomic"),
      command: `torn=0; for i in $(seq 1 400); do s=$(tr -d 'ab' < atomic.txt | wc -c); n=$(wc -c < atomic.txt); [ "$s" = 0 ] && [ "$n" = 300000 ] || torn=$((torn+1)); done; echo torn=$torn`,
      timeoutSec: 120,
    });
    const folded = fold(reader);
    let writes = 0;
    let done = false;
    void folded.then(() => {
      done = true;
    });
    while (!done) {
      await host.client.write({ path: "atomic.txt", content: writes % 2 === 0 ? b : a });
      writes++;
    }
    expect((await folded).text).toContain("torn=0");
    expect(writes).toBeGreaterThan(5);
  }, 120_000);

  it("refuses paths that leave the workspace, naming no host path", async () => {
    symlinkSync(outside, path.join(host.root, "out-dir"));
    symlinkSync(path.join(outside, "secret.txt"), path.join(host.root, "out-file"));
    expect(await refusal(() => host.client.write({ path: "../x.txt", content: "x" }))).toBe(
      "403 path '../x.txt' escapes the workspace root; name a path inside it",
    );
    expect(await refusal(() => host.client.write({ path: "/etc/x", content: "x" }))).toBe(
      "400 path '/etc/x' is absolute outside /workspace; name a path relative to the workspace root or under /workspace",
    );
    expect(
      await refusal(() => host.client.write({ path: "out-dir/new.txt", content: "x" })),
    ).toMatch(
      /^403 path 'out-dir\/new.txt' resolves \(through a symlink\) outside the workspace root/,
    );
    expect(await refusal(() => host.client.write({ path: "out-file", content: "x" }))).toMatch(
      /^403 /,
    );
    expect(await refusal(() => host.client.write({ path: "w", content: "x" }))).toBe(
      "400 'w' is a directory; write a file path",
    );
    expect(existsSync(path.join(outside, "new.txt"))).toBe(false);
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("SECRET\n");
  });

  it("writing through a symlink inside the workspace changes the file it names", async () => {
    writeFileSync(path.join(host.root, "target.txt"), "before\n");
    symlinkSync("target.txt", path.join(host.root, "alias.txt"));
    await host.client.write({ path: "alias.txt", content: "after\n" });
    expect(onDisk("target.txt")).toBe("after\n");
  });

  it("a hard link's other name keeps the old content", async () => {
    // The workspace is a mount of its own (decision 240): no name outside can be linked in.
    expect(() =>
      linkSync(path.join(outside, "secret.txt"), path.join(host.root, "linked.txt")),
    ).toThrow(/EXDEV/);
    writeFileSync(path.join(host.root, "original.txt"), "before\n");
    linkSync(path.join(host.root, "original.txt"), path.join(host.root, "linked.txt"));
    await host.client.write({ path: "linked.txt", content: "inside\n" });
    expect(onDisk("linked.txt")).toBe("inside\n");
    expect(onDisk("original.txt")).toBe("before\n");
    // edit reads the file, so a name with another (which may lie outside) is refused as read refuses it.
    linkSync(path.join(host.root, "original.txt"), path.join(host.root, "linked-again.txt"));
    expect(
      await refusal(() =>
        host.client.edit({ path: "linked-again.txt", edits: [{ oldText: "bef", newText: "aft" }] }),
      ),
    ).toMatch(/^403 'linked-again.txt' is a hard link \(2 names\)/);
    expect(onDisk("original.txt")).toBe("before\n");
  });
});

describe("paths as a command sees them: /workspace", () => {
  it("the file tools and cwd take /workspace/… as the path relative to the root", async () => {
    await host.client.write({ path: "/workspace/ws/a.txt", content: "one\n" });
    expect(onDisk("ws/a.txt")).toBe("one\n");
    await host.client.edit({
      path: "/workspace/ws/a.txt",
      edits: [{ oldText: "one", newText: "two" }],
    });
    expect((await host.client.read({ path: "/workspace/ws/a.txt" })).lines).toEqual(["two"]);
    const ran = await fold(
      host.client.exec({
        execId: execId(),
        command: "pwd; cat a.txt; echo $HOME",
        cwd: "/workspace/ws",
      }),
    );
    expect(ran.text).toBe("/workspace/ws\ntwo\n/workspace\n");
    // What pwd printed is a path the tools take back.
    expect((await host.client.read({ path: `${ran.text.split("\n")[0]}/a.txt` })).lines).toEqual([
      "two",
    ]);
  });

  it("an absolute path elsewhere, or one that only starts like /workspace, is a 400", async () => {
    for (const p of ["/workspaces/a.txt", "/workspace-x", "/tmp/a.txt"]) {
      expect(await refusal(() => host.client.read({ path: p }))).toMatch(
        /^400 path '.+' is absolute outside \/workspace/,
      );
    }
    expect(await refusal(() => host.client.read({ path: "/workspace/../etc/passwd" }))).toMatch(
      /^403 path '\/workspace\/\.\.\/etc\/passwd' escapes the workspace root/,
    );
  });
});

describe("bytes edit does not touch", () => {
  const bytes = (rel: string) => readFileSync(path.join(host.root, rel));

  it("an edit keeps CRLF, a BOM and every byte outside its range", async () => {
    const original = Buffer.from("\uFEFFone\r\ntwo\r\nthree\r\n", "utf8");
    writeFileSync(path.join(host.root, "crlf.txt"), original);
    await host.client.edit({ path: "crlf.txt", edits: [{ oldText: "two", newText: "2" }] });
    expect(bytes("crlf.txt")).toEqual(Buffer.from("\uFEFFone\r\n2\r\nthree\r\n", "utf8"));
  });

  it("an edit of a file with invalid UTF-8 is refused, naming where, and changes nothing", async () => {
    // Three invalid sequences the edit does not touch: a lone continuation byte, a cut
    // two-byte sequence and an overlong NUL.
    const original = Buffer.concat([
      Buffer.from("keep \x80 here\nfix me\n", "latin1"),
      Buffer.from([0xc3, 0x0a, 0xc0, 0x80, 0x0a]),
    ]);
    writeFileSync(path.join(host.root, "latin.txt"), original);
    expect(
      await refusal(() =>
        host.client.edit({ path: "latin.txt", edits: [{ oldText: "fix me", newText: "fixed" }] }),
      ),
    ).toMatch(/^400 'latin.txt' is not valid UTF-8 \(byte 5 is not\)/);
    expect(bytes("latin.txt")).toEqual(original);
  });

  it("an edit of a file with NUL bytes is refused and changes nothing", async () => {
    const original = Buffer.from("a\0b\nfix me\n", "latin1");
    writeFileSync(path.join(host.root, "nul.bin"), original);
    expect(
      await refusal(() =>
        host.client.edit({ path: "nul.bin", edits: [{ oldText: "fix me", newText: "fixed" }] }),
      ),
    ).toMatch(/^400 'nul.bin' looks like a binary file/);
    expect(bytes("nul.bin")).toEqual(original);
  });

  it("write keeps NUL bytes, CRLF and every character exact", async () => {
    const content = "a\0b\r\n\uFEFF\u00e9\ud83d\ude00\r\rz";
    await host.client.write({ path: "exact.txt", content });
    expect(bytes("exact.txt")).toEqual(Buffer.from(content, "utf8"));
  });
});

describe("the write size cap", () => {
  let small: TestHost;
  beforeAll(async () => {
    small = await startTestHost({ maxWriteBytes: 1000 });
  });
  afterAll(() => small.close());

  it("takes 999 and 1,000 bytes and refuses 1,001 with the limit, changing nothing", async () => {
    expect((await small.client.write({ path: "cap.txt", content: "x".repeat(999) })).bytes).toBe(
      999,
    );
    expect((await small.client.write({ path: "cap.txt", content: "y".repeat(1000) })).bytes).toBe(
      1000,
    );
    let message = "";
    try {
      await small.client.write({ path: "cap.txt", content: "z".repeat(1001) });
    } catch (err) {
      message = `${(err as SandboxHttpError).status} ${(err as SandboxHttpError).reason}`;
    }
    expect(message).toBe(
      "413 content for 'cap.txt' is 1001 bytes, over the 1000-byte limit of write and edit (SANDBOX_MAX_WRITE_BYTES); split the file or change it with bash",
    );
    expect(readFileSync(path.join(small.root, "cap.txt"), "utf8")).toBe("y".repeat(1000));
  });

  it("an edit whose result would pass the cap is refused and changes nothing", async () => {
    await small.client.write({ path: "grow.txt", content: `${"x".repeat(990)}END` });
    await expect(
      small.client.edit({ path: "grow.txt", edits: [{ oldText: "END", newText: "0123456789ab" }] }),
    ).rejects.toThrow("'grow.txt' after the edits is 1002 bytes, over the 1000-byte limit");
    await small.client.edit({
      path: "grow.txt",
      edits: [{ oldText: "END", newText: "0123456789" }],
    });
    expect(readFileSync(path.join(small.root, "grow.txt"), "utf8")).toHaveLength(1000);
  });
});

describe("edit", () => {
  it("answers pi's diff and first changed line, and keeps CRLF and the BOM", async () => {
    writeFileSync(path.join(host.root, "crlf.txt"), "\uFEFFone\r\ntwo\r\nthree\r\n");
    const result = await host.client.edit({
      path: "crlf.txt",
      edits: [{ oldText: "two", newText: "2" }],
    });
    expect(result).toEqual({
      path: "crlf.txt",
      replaced: 1,
      diff: " 1 one\n-2 two\n+2 2\n 3 three",
      firstChangedLine: 2,
    });
    expect(onDisk("crlf.txt")).toBe("\uFEFFone\r\n2\r\nthree\r\n");
  });

  it("says which edit failed and why, and changes nothing", async () => {
    writeFileSync(path.join(host.root, "dup.txt"), "x\nx\ny\n");
    expect(
      await refusal(() =>
        host.client.edit({
          path: "dup.txt",
          edits: [
            { oldText: "y", newText: "z" },
            { oldText: "x", newText: "w" },
          ],
        }),
      ),
    ).toBe(
      "400 Found 2 occurrences of edits[1] in dup.txt. Each oldText must be unique. Please provide more context to make it unique.",
    );
    expect(onDisk("dup.txt")).toBe("x\nx\ny\n");
    expect(
      await refusal(() =>
        host.client.edit({ path: "nope.txt", edits: [{ oldText: "a", newText: "b" }] }),
      ),
    ).toBe("404 'nope.txt' does not exist in the workspace; list files with glob");
    expect(
      await refusal(() =>
        host.client.edit({ path: "out-file", edits: [{ oldText: "S", newText: "b" }] }),
      ),
    ).toMatch(/^403 /);
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("SECRET\n");
  });

  it("20 concurrent edits of different lines of one file all land", async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `row ${i}`);
    await host.client.write({ path: "rows.txt", content: `${lines.join("\n")}\n` });
    await Promise.all(
      lines.map((line) =>
        host.client.edit({
          path: "rows.txt",
          edits: [{ oldText: `${line}\n`, newText: `${line} done\n` }],
        }),
      ),
    );
    expect(onDisk("rows.txt")).toBe(lines.map((l) => `${l} done\n`).join(""));
  });
});

describe("ls", () => {
  it("sorts case-insensitively, marks directories, includes dotfiles, stops at the limit", async () => {
    mkdirSync(path.join(host.root, "ls/Sub"), { recursive: true });
    for (const name of ["b.txt", "A.txt", ".hidden", "c.md"])
      writeFileSync(path.join(host.root, "ls", name), "");
    expect(await host.client.ls({ path: "ls" })).toEqual({
      path: "ls",
      entries: [".hidden", "A.txt", "b.txt", "c.md", "Sub/"],
      total: 5,
    });
    expect(await host.client.ls({ path: "ls", limit: 2 })).toEqual({
      path: "ls",
      entries: [".hidden", "A.txt"],
      total: 5,
    });
    expect(await refusal(() => host.client.ls({ path: "ls/b.txt" }))).toBe(
      "400 'ls/b.txt' is not a directory; read it with read",
    );
    expect(await refusal(() => host.client.ls({ path: "out-dir" }))).toMatch(/^403 /);
  });
});

describe("find", () => {
  it("matches names at any depth, hidden files too, .gitignore applied, paths below the folder", async () => {
    mkdirSync(path.join(host.root, "f/src/lib"), { recursive: true });
    mkdirSync(path.join(host.root, "f/.config"), { recursive: true });
    mkdirSync(path.join(host.root, "f/gen"), { recursive: true });
    writeFileSync(path.join(host.root, "f/src/a.ts"), "");
    writeFileSync(path.join(host.root, "f/src/lib/b.ts"), "");
    writeFileSync(path.join(host.root, "f/src/lib/b.spec.ts"), "");
    writeFileSync(path.join(host.root, "f/.config/c.ts"), "");
    writeFileSync(path.join(host.root, "f/gen/d.ts"), "");
    writeFileSync(path.join(host.root, "f/.gitignore"), "gen/\n");
    const find = async (pattern: string, limit?: number) =>
      (await host.client.find({ pattern, path: "f", ...(limit ? { limit } : {}) })).paths;
    expect(await find("*.ts")).toEqual([
      ".config/c.ts",
      "src/a.ts",
      "src/lib/b.spec.ts",
      "src/lib/b.ts",
    ]);
    expect(await find("lib/*.spec.ts")).toEqual(["src/lib/b.spec.ts"]);
    expect(await find("**/*.ts", 2)).toEqual([".config/c.ts", "src/a.ts"]);
    expect((await host.client.find({ pattern: "*.ts", path: "f", limit: 2 })).truncated).toBe(true);
    expect(await refusal(() => host.client.find({ pattern: "*", path: "missing" }))).toBe(
      "404 'missing' does not exist in the workspace; list files with ls or find",
    );
  });
});
