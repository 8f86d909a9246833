import { execSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRipgrep } from "../../../../sandbox/files/ripgrep.ts";
import { MAX_READ_LINE_CHARS } from "../../../../src/protocol/index.ts";
import { startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
  const w = (rel: string, text: string | Buffer) => {
    mkdirSync(path.dirname(path.join(host.root, rel)), { recursive: true });
    writeFileSync(path.join(host.root, rel), text);
  };
  w("ten.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
  w("empty.txt", "");
  w("long.txt", `${"é".repeat(3000)}\nshort\n`);
  w("binary.bin", Buffer.from([0x41, 0x00, 0x42]));
  w("wide.txt", Array.from({ length: 100 }, () => "w".repeat(1000)).join("\n"));
});
afterAll(() => host.close());

describe("read", () => {
  it("returns a numbered window with totals and the next offset", async () => {
    const r = await host.client.read({ path: "ten.txt", offset: 3, limit: 2 });
    expect(r).toEqual({
      path: "ten.txt",
      startLine: 3,
      lines: ["line 3", "line 4"],
      totalLines: 10,
      cutLines: 0,
      truncatedBy: "lines",
      nextOffset: 5,
    });
  });

  it("limit at, under and over the remaining lines", async () => {
    const at = await host.client.read({ path: "ten.txt", offset: 9, limit: 2 });
    expect(at).toMatchObject({ lines: ["line 9", "line 10"], truncatedBy: null });
    expect(at.nextOffset).toBeUndefined();
    const under = await host.client.read({ path: "ten.txt", offset: 9, limit: 1 });
    expect(under).toMatchObject({ lines: ["line 9"], truncatedBy: "lines", nextOffset: 10 });
    const over = await host.client.read({ path: "ten.txt", offset: 9, limit: 3 });
    expect(over).toMatchObject({ lines: ["line 9", "line 10"], truncatedBy: null });
  });

  it("offset at the last line works; one past the end is a clear 400", async () => {
    expect((await host.client.read({ path: "ten.txt", offset: 10 })).lines).toEqual(["line 10"]);
    await expect(host.client.read({ path: "ten.txt", offset: 11 })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/offset 11 is past the end of 'ten.txt' \(10 lines\)/),
    });
    expect(await host.client.read({ path: "empty.txt" })).toMatchObject({
      lines: [],
      totalLines: 0,
    });
  });

  it("cuts long lines to the preview cap and stops at the byte cap", async () => {
    const long = await host.client.read({ path: "long.txt" });
    expect(long.lines[0]).toBe("é".repeat(2000));
    expect(long).toMatchObject({ cutLines: 1, totalLines: 2 });
    const wide = await host.client.read({ path: "wide.txt" });
    // A line prints as "<n>\t" + 1000 bytes + "\n": lines 1-9 take 1003 bytes, 10-51
    // take 1004 (51,195 bytes in all); line 52 would pass 51,200.
    expect(wide).toMatchObject({ truncatedBy: "bytes", totalLines: 100, nextOffset: 52 });
    expect(wide.lines).toHaveLength(51);
  });

  it("refuses binary files, directories and missing files with what to do", async () => {
    await expect(host.client.read({ path: "binary.bin" })).rejects.toMatchObject({ status: 400 });
    await expect(host.client.read({ path: "." })).rejects.toMatchObject({ status: 400 });
    await expect(host.client.read({ path: "missing.txt" })).rejects.toMatchObject({ status: 404 });
  });
});

describe("workspace confinement and auth", () => {
  it("refuses paths that escape the root: .., absolute, symlinks out", async () => {
    symlinkSync("/etc", path.join(host.root, "etc-link"));
    await expect(host.client.read({ path: "../etc/passwd" })).rejects.toMatchObject({
      status: 403,
    });
    await expect(host.client.read({ path: "/etc/passwd" })).rejects.toMatchObject({ status: 400 });
    await expect(host.client.read({ path: "etc-link/passwd" })).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/outside the workspace root/),
    });
    await expect(host.client.grep({ pattern: "root", path: "etc-link" })).rejects.toMatchObject({
      status: 403,
    });
    await expect(host.client.glob({ pattern: "*", path: ".." })).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      host.client.exec({ execId: "escape", command: "pwd", cwd: "../" }).next(),
    ).rejects.toMatchObject({ status: 403 });
  });

  it("allows symlinks that stay inside the root", async () => {
    mkdirSync(path.join(host.root, "inside"));
    writeFileSync(path.join(host.root, "inside", "x.txt"), "ok\n");
    symlinkSync(path.join(host.root, "inside"), path.join(host.root, "inside-link"));
    expect((await host.client.read({ path: "inside-link/x.txt" })).lines).toEqual(["ok"]);
    expect((await host.client.read({ path: "inside/../inside/x.txt" })).lines).toEqual(["ok"]);
  });

  it("maxLineChars gives longer lines whole, up to its cap; past the cap is a 400", async () => {
    writeFileSync(path.join(host.root, "line-5000.txt"), `${"z".repeat(5000)}\nend\n`);
    const read = (maxLineChars?: number) =>
      host.client.read({ path: "line-5000.txt", ...(maxLineChars ? { maxLineChars } : {}) });
    expect((await read()).lines[0]).toHaveLength(2000);
    expect(await read(4999)).toMatchObject({ cutLines: 1 });
    expect((await read(5000)).lines).toEqual(["z".repeat(5000), "end"]);
    expect(await read(5000)).toMatchObject({ cutLines: 0 });
    expect((await read(MAX_READ_LINE_CHARS)).lines[0]).toHaveLength(5000);
    await expect(read(MAX_READ_LINE_CHARS + 1)).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/maxLineChars/),
    });
  });

  it("refuses a missing or wrong bearer token; /healthz is open", async () => {
    const none = await fetch(`${host.url}/v1/read`, { method: "POST", body: "{}" });
    expect(none.status).toBe(401);
    const wrong = await fetch(`${host.url}/v1/read`, {
      method: "POST",
      headers: { authorization: `Bearer ${host.token.slice(0, -1)}x` },
      body: JSON.stringify({ path: "ten.txt" }),
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: { code: "unauthorized" } });
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it("validates bodies with a message naming the field", async () => {
    const res = await fetch(`${host.url}/v1/exec`, {
      method: "POST",
      headers: { authorization: `Bearer ${host.token}` },
      body: JSON.stringify({ execId: "a/b", command: "true" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/execId/);
  });
});

const rg = findRipgrep();

describe.each([
  ["walker", null],
  ["ripgrep", rg],
])("grep and glob with the %s", (engine, rgPath) => {
  let h: TestHost;
  beforeAll(async () => {
    if (engine === "ripgrep")
      expect(rgPath, "ripgrep must be installed (apt-get install ripgrep)").not.toBeNull();
    h = await startTestHost({ rgPath });
    for (const name of ["a", "b", "c"]) {
      mkdirSync(path.join(h.root, "src", name), { recursive: true });
      writeFileSync(
        path.join(h.root, "src", name, "one.ts"),
        "const needle = 1;\nconst other = 2;\n",
      );
      writeFileSync(path.join(h.root, "src", name, "two.md"), "Needle in prose\n");
    }
  });
  afterAll(() => h.close());

  it("grep finds matches in path order and reports the engine", async () => {
    const r = await h.client.grep({ pattern: "needle" });
    expect(r.engine).toBe(engine);
    expect(r.matches).toEqual([
      { path: "src/a/one.ts", line: 1, text: "const needle = 1;" },
      { path: "src/b/one.ts", line: 1, text: "const needle = 1;" },
      { path: "src/c/one.ts", line: 1, text: "const needle = 1;" },
    ]);
    expect(r.truncated).toBe(false);
  });

  it("grep honours ignoreCase, literal, glob and path", async () => {
    const r = await h.client.grep({
      pattern: "NEEDLE",
      ignoreCase: true,
      glob: "*.md",
      path: "src/b",
    });
    expect(r.matches).toEqual([{ path: "src/b/two.md", line: 1, text: "Needle in prose" }]);
    const literal = await h.client.grep({ pattern: "1;", literal: true, path: "src/a" });
    expect(literal.matches.map((m) => m.path)).toEqual(["src/a/one.ts"]);
  });

  it("grep limit: exactly the match count is complete, one fewer truncates at the probe", async () => {
    const at = await h.client.grep({ pattern: "needle", limit: 3 });
    expect(at).toMatchObject({ truncated: false });
    expect(at.matches).toHaveLength(3);
    const under = await h.client.grep({ pattern: "needle", limit: 2 });
    expect(under).toMatchObject({ truncated: true });
    expect(under.matches.map((m) => m.path)).toEqual(["src/a/one.ts", "src/b/one.ts"]);
    const over = await h.client.grep({ pattern: "needle", limit: 4 });
    expect(over).toMatchObject({ truncated: false });
  });

  it("glob lists matching paths with the same limit rules", async () => {
    const all = await h.client.glob({ pattern: "**/*.ts" });
    expect(all).toMatchObject({
      paths: ["src/a/one.ts", "src/b/one.ts", "src/c/one.ts"],
      truncated: false,
    });
    const names = await h.client.glob({ pattern: "*.md", path: "src" });
    expect(names.paths).toEqual(["src/a/two.md", "src/b/two.md", "src/c/two.md"]);
    const anchored = await h.client.glob({ pattern: "src/b/*" });
    expect(anchored.paths).toEqual(["src/b/one.ts", "src/b/two.md"]);
    expect(await h.client.glob({ pattern: "**/*.ts", limit: 3 })).toMatchObject({
      truncated: false,
    });
    const cut = await h.client.glob({ pattern: "**/*.ts", limit: 2 });
    expect(cut).toMatchObject({ paths: ["src/a/one.ts", "src/b/one.ts"], truncated: true });
  });

  it("stops the upstream search at the probe: a FIFO after it is never opened", async () => {
    // Reading a FIFO with no writer blocks forever; the search must stop before it.
    mkdirSync(path.join(h.root, "fifo"));
    writeFileSync(path.join(h.root, "fifo", "a.txt"), "hit\n");
    writeFileSync(path.join(h.root, "fifo", "b.txt"), "hit\n");
    execSync(`mkfifo ${path.join(h.root, "fifo", "c.txt")}`);
    const r = await h.client.grep({ pattern: "hit", path: "fifo", limit: 1 });
    expect(r).toMatchObject({
      matches: [{ path: "fifo/a.txt", line: 1, text: "hit" }],
      truncated: true,
    });
  });

  it("a bad pattern is a clear 400", async () => {
    await expect(h.client.grep({ pattern: "(" })).rejects.toMatchObject({ status: 400 });
    await expect(h.client.glob({ pattern: "{a,b" })).rejects.toMatchObject({ status: 400 });
  });
});
