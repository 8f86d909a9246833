import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_DRAIN_BYTES } from "../../../../sandbox/sandboxes/tar-files.ts";
import { type SandboxTestHost, startSandboxTestHost, type TestSandbox } from "./sandbox-host.ts";

let host: SandboxTestHost;
let sbx: TestSandbox;
const scratch = mkdtempSync(path.join(tmpdir(), "toolwire-tar-"));

beforeAll(async () => {
  host = await startSandboxTestHost({ diskBytes: 16 * 1024 * 1024 });
  sbx = await host.create();
});
afterAll(async () => {
  await host.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A tar made by GNU tar from a tree `build` writes into a fresh directory. */
function tarOf(build: (dir: string) => void, ...names: string[]): Buffer {
  const dir = mkdtempSync(path.join(scratch, "tree-"));
  build(dir);
  return execFileSync("tar", ["-c", "-f", "-", "-C", dir, ...(names.length ? names : ["."])], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** One ustar header (and data) block by hand, for entries GNU tar would not write. */
function entry(name: string, type: string, data = "", link = ""): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, "utf8");
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write("        ", 148);
  header.write(type, 156);
  header.write(link, 157, 100, "utf8");
  header.write("ustar\0", 257);
  header.write("00", 263);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  const body = Buffer.alloc(Math.ceil(data.length / 512) * 512);
  body.write(data);
  return Buffer.concat([header, body]);
}

/** A 1 MiB file with one 5-byte extent, archived by GNU tar as a PAX sparse file. */
function sparseTar(): Buffer {
  const dir = mkdtempSync(path.join(scratch, "sparse-"));
  const file = path.join(dir, "sparse.bin");
  writeFileSync(file, "hello", { flag: "w" });
  truncateSync(file, 1024 * 1024);
  appendFileSync(file, "world");
  return execFileSync("tar", [
    "--sparse",
    "--format=pax",
    "-c",
    "-f",
    "-",
    "-C",
    dir,
    "sparse.bin",
  ]);
}

function archive(...entries: Buffer[]): Buffer {
  return Buffer.concat([...entries, Buffer.alloc(1024)]);
}

const upload = (body: Buffer, target = "") =>
  host.request(
    "PUT",
    `/sandboxes/${sbx.id}/v1/files?path=${encodeURIComponent(target)}`,
    new Uint8Array(body),
    "application/x-tar",
  );

/**
 * PUTs `head`, waits for the host to have refused it, then sends `rest` more bytes in
 * 1 MiB writes. `sent`: every byte went out and the request ended without a reset.
 */
function slowUpload(
  head: Buffer,
  rest: number,
): Promise<{ status: number | null; body: string; sent: boolean }> {
  const url = new URL(`${host.url}/sandboxes/${sbx.id}/v1/files?path=drained`);
  return new Promise((resolve) => {
    let status: number | null = null;
    let body = "";
    let ended = false;
    let answered = false;
    const settle = () => {
      if (ended && answered) resolve({ status, body, sent: true });
    };
    const req = httpRequest(url, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${host.token}`,
        "content-type": "application/x-tar",
        "content-length": String(head.length + rest),
      },
    });
    req.on("response", (res) => {
      status = res.statusCode ?? null;
      res.setEncoding("utf8");
      res.on("data", (text: string) => {
        body += text;
      });
      res.on("end", () => {
        answered = true;
        settle();
      });
    });
    req.on("error", () => resolve({ status, body, sent: false }));
    req.write(head);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    let left = rest;
    const pump = () => {
      while (left > 0) {
        const piece = chunk.subarray(0, Math.min(chunk.length, left));
        left -= piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      req.end(() => {
        ended = true;
        settle();
      });
    };
    setTimeout(pump, 200);
  });
}

describe("files in and out as tar", () => {
  it("uploads a tree into a path, made if missing, and the sandbox's commands see it", async () => {
    const tar = tarOf((dir) => {
      mkdirSync(path.join(dir, "src"));
      writeFileSync(path.join(dir, "src/a.ts"), "export const a = 1;\n");
      writeFileSync(path.join(dir, "README"), "hello\n");
      symlinkSync("src/a.ts", path.join(dir, "link-to-a"));
    });
    const res = await upload(tar, "repo");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: "repo", entries: 5 });
    const ran = await sbx.run("cat repo/README repo/link-to-a");
    expect(ran.text).toBe("hello\nexport const a = 1;\n");
  });

  it("an upload keeps every byte: invalid UTF-8, NUL bytes, CRLF", async () => {
    const raw = Buffer.from([0x80, 0x00, 0x0d, 0x0a, 0xc3, 0x0a, 0xff, 0xfe, 0x41]);
    const res = await upload(
      tarOf((dir) => writeFileSync(path.join(dir, "raw.bin"), raw)),
      "raw",
    );
    expect(res.status).toBe(200);
    expect(readFileSync(path.join(sbx.workspace, "raw/raw.bin"))).toEqual(raw);
  });

  it("downloads a path as a tar that holds the same files, links as links", async () => {
    const res = await host.request("GET", `/sandboxes/${sbx.id}/v1/files?path=repo`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-tar");
    const out = mkdtempSync(path.join(scratch, "out-"));
    const tar = Buffer.from(await res.arrayBuffer());
    execFileSync("tar", ["-x", "-f", "-", "-C", out], { input: tar });
    // No host account shows: every entry is 0/0, with no names.
    const owners = execFileSync("tar", ["-t", "-v", "-f", "-"], { input: tar })
      .toString()
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/)[1]);
    expect(new Set(owners)).toEqual(new Set(["0/0"]));
    expect(readFileSync(path.join(out, "repo/src/a.ts"), "utf8")).toBe("export const a = 1;\n");
    expect(
      execFileSync("readlink", [path.join(out, "repo/link-to-a")])
        .toString()
        .trim(),
    ).toBe("src/a.ts");
  });

  it("a download of a missing path is a 404, and of a path outside the workspace a 403", async () => {
    expect((await host.request("GET", `/sandboxes/${sbx.id}/v1/files?path=nope`)).status).toBe(404);
    expect((await host.request("GET", `/sandboxes/${sbx.id}/v1/files?path=../..`)).status).toBe(
      403,
    );
  });

  const refused: [string, Buffer, RegExp][] = [
    [
      "a '..' entry",
      archive(entry("ok.txt", "0", "ok"), entry("../escape.txt", "0", "x")),
      /leaves the workspace/,
    ],
    ["an absolute entry", archive(entry("/tmp/abs.txt", "0", "x")), /leaves the workspace/],
    [
      "a symlink to an absolute path",
      archive(entry("etc", "2", "", "/etc")),
      /symlink 'etc' points outside/,
    ],
    ["a symlink that climbs out", archive(entry("d/up", "2", "", "../../..")), /points outside/],
    [
      "a hard link to a path outside",
      archive(entry("h", "1", "", "../../x")),
      /hard link 'h' points outside/,
    ],
    [
      "an entry through a symlink the archive made",
      archive(entry("a", "2", "", "."), entry("a/b", "0", "x")),
      /goes through a symlink/,
    ],
    ["a device", archive(entry("null", "3")), /tar type '3'/],
    [
      "a cut archive",
      entry("big.txt", "0", "x".repeat(2000)).subarray(0, 1024),
      /ends inside an entry/,
    ],
    ["bytes that are not tar", Buffer.alloc(1024, 7), /not a tar archive/],
    ["a PAX sparse file", sparseTar(), /sparse file/],
  ];
  for (const [what, body, why] of refused) {
    it(`refuses ${what} with a 400 and writes nothing`, async () => {
      const before = readdirSync(sbx.workspace).sort();
      const res = await upload(body, "in");
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(why);
      expect(readdirSync(sbx.workspace).sort()).toEqual(before);
    });
  }

  it("a refused archive is answered after the rest of its body is read; past the drain cap the connection is closed", async () => {
    // The refusal comes at the first header; the caller is still sending. A host that
    // closed the connection then made the Worker answer 502 sandbox_unreachable.
    const bad = entry("../escape.txt", "0", "x");
    const under = await slowUpload(bad, MAX_DRAIN_BYTES - bad.length - 512 * 1024);
    expect(under).toMatchObject({ status: 400, sent: true });
    expect(under.body).toMatch(/leaves the workspace/);
    const over = await slowUpload(bad, MAX_DRAIN_BYTES + 16 * 1024 * 1024);
    expect(over.sent).toBe(false);
  });

  it("a symlink that stays inside is accepted", async () => {
    const res = await upload(
      archive(entry("x.txt", "0", "x"), entry("y", "2", "", "x.txt")),
      "links",
    );
    expect(res.status).toBe(200);
    expect((await sbx.run("cat links/y")).text).toBe("x");
  });

  it("an upload larger than the disk quota is a 507 and leaves no archive behind", async () => {
    const big = tarOf((dir) =>
      writeFileSync(path.join(dir, "big.bin"), Buffer.alloc(20 * 1024 * 1024, 1)),
    );
    const res = await upload(big, "big");
    expect(res.status).toBe(507);
    expect(await res.text()).toMatch(/disk quota/);
    expect(readdirSync(path.join(sbx.disk, "incoming"))).toEqual([]);
  });
});
