import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, EXIT, runCli } from "../../../src/client/cli/commands.ts";
import { UsageError } from "../../../src/client/cli/parse-args.ts";
import { parseSandboxArgs } from "../../../src/client/cli/sandbox-command.ts";

const ID = "sbx_default_0123456789abcdef0123";
const view = (status = "active") => ({
  id: ID,
  name: "n",
  status,
  backend: "host",
  placement: "default",
  expiresAt: status === "active" ? "2026-12-01T23:10:00.000Z" : null,
  endReason: status === "active" ? null : "it was deleted",
});

let server: Server;
let url = "";
let uploaded: Buffer = Buffer.alloc(0);
const seen: string[] = [];
const sentBodies: unknown[] = [];
const scratch = mkdtempSync(path.join(tmpdir(), "tw-cli-sbx-"));

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  // The download fixture is a tar of a small tree built here, so the test reads no path
  // outside its own scratch directory.
  const tree = path.join(scratch, "tree");
  mkdirSync(path.join(tree, "bin"), { recursive: true });
  writeFileSync(path.join(tree, "bin", "toolwire"), "#!/bin/sh\n");
  const tar = execFileSync("tar", ["-c", "-f", "-", "-C", tree, "bin"]);
  server = createServer(async (req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    const data = await body(req);
    if (req.method === "POST" && data.length > 0) sentBodies.push(JSON.parse(data.toString()));
    res.setHeader("content-type", "application/json");
    if (req.url?.includes("sbx_gone")) {
      res.statusCode = 410;
      res.end(
        JSON.stringify({
          error: { code: "gone", message: "sandbox sbx_gone is deleted: it was deleted" },
        }),
      );
    } else if (req.method === "POST" && req.url === "/v1/sandboxes")
      res.end(JSON.stringify(view()));
    else if (req.method === "GET" && req.url === "/v1/sandboxes")
      res.end(JSON.stringify({ sandboxes: [view()] }));
    else if (req.method === "DELETE") res.end(JSON.stringify(view("deleted")));
    else if (req.method === "PUT") {
      uploaded = data;
      res.end(JSON.stringify({ path: "repo", entries: 3, bytes: data.length }));
    } else if (req.method === "GET" && req.url?.includes("/files")) {
      res.setHeader("content-type", "application/x-tar");
      res.end(tar);
    } else {
      res.statusCode = 410;
      res.end(
        JSON.stringify({
          error: { code: "gone", message: `sandbox ${ID} is deleted: it was deleted` },
        }),
      );
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function proc() {
  const out: string[] = [];
  const err: string[] = [];
  const p: CliProcess = {
    stdout: { write: (t: string) => out.push(t) },
    stderr: { write: (t: string) => err.push(t) },
    env: { TOOLWIRE_URL: url, TOOLWIRE_TOKEN: "tok" },
    onInterrupt: () => () => {},
    version: "test",
  };
  return { p, out, err };
}

describe("toolwire sandbox", () => {
  it("create prints the id; list prints one line per sandbox; rm prints its ended line", async () => {
    const c = proc();
    expect(await runCli(["sandbox", "create", "--name", "n", "--idle", "900"], c.p)).toBe(EXIT.ok);
    expect(c.out.join("")).toBe(`${ID}\n`);
    expect(seen.at(-1)).toBe("POST /v1/sandboxes Bearer tok");
    const l = proc();
    expect(await runCli(["sandbox", "list"], l.p)).toBe(EXIT.ok);
    expect(l.out.join("")).toBe(`${ID}\tactive\tn\tidle until 2026-12-01T23:10:00.000Z\n`);
    const r = proc();
    expect(await runCli(["sandbox", "rm", ID], r.p)).toBe(EXIT.ok);
    expect(r.out.join("")).toContain("deleted\tn\tit was deleted");
  });

  it("upload packs a directory with tar and sends it to the path", async () => {
    const dir = path.join(scratch, "repo");
    mkdirSync(path.join(dir, "src"), { recursive: true });
    writeFileSync(path.join(dir, "src/a.txt"), "a\n");
    const c = proc();
    expect(await runCli(["sandbox", "upload", ID, dir, "--path", "repo"], c.p)).toBe(EXIT.ok);
    expect(seen.at(-1)).toBe(`PUT /v1/sandboxes/${ID}/files?path=repo Bearer tok`);
    const listed = execFileSync("tar", ["-t", "-f", "-"], { input: uploaded }).toString();
    expect(listed).toContain("./src/a.txt");
    expect(c.out.join("")).toContain("3 entries");
  });

  it("download writes the tar to --out", async () => {
    const out = path.join(scratch, "out.tar");
    const c = proc();
    expect(await runCli(["sandbox", "download", ID, "bin", "--out", out], c.p)).toBe(EXIT.ok);
    expect(execFileSync("tar", ["-t", "-f", out]).toString()).toContain("bin/toolwire");
    expect(readFileSync(out).length).toBeGreaterThan(512);
  });

  it("an API error is printed and exits non-zero; bad usage exits 2", async () => {
    const c = proc();
    const code = await runCli(["sandbox", "upload", "sbx_gone", path.join(scratch, "repo")], c.p);
    expect(code).not.toBe(EXIT.ok);
    expect(c.err.join("")).toContain("is deleted");
    const u = proc();
    expect(await runCli(["sandbox", "frobnicate"], u.p)).toBe(EXIT.usage);
    expect(() => parseSandboxArgs(["create", "--idle", "soon"])).toThrow(UsageError);
    expect(() => parseSandboxArgs(["rm"])).toThrow(/one or more sandbox ids/);
    expect(() => parseSandboxArgs(["list", "--path", "x"])).toThrow(/takes no --path/);
    expect(() => parseSandboxArgs(["list", "--allow", "x.test"])).toThrow(/takes no --allow/);
  });

  it("create --allow, repeated, is the sandbox's network policy in order", () => {
    expect(
      parseSandboxArgs(["create", "--allow", "registry.npmjs.org", "--allow", "*.github.com:22"]),
    ).toEqual({ action: "create", json: false, allow: ["registry.npmjs.org", "*.github.com:22"] });
    expect(parseSandboxArgs(["create"])).toEqual({ action: "create", json: false });
  });

  it("create --backend host|container and --idle as a duration (seconds, s, m, h, d)", () => {
    expect(parseSandboxArgs(["create", "--backend", "container", "--idle", "15m"])).toEqual({
      action: "create",
      json: false,
      backend: "container",
      idleTimeoutSeconds: 900,
    });
    expect(parseSandboxArgs(["create", "--idle", "1"])).toMatchObject({ idleTimeoutSeconds: 1 });
    expect(parseSandboxArgs(["create", "--idle", "90s"])).toMatchObject({ idleTimeoutSeconds: 90 });
    expect(parseSandboxArgs(["create", "--idle", "2h"])).toMatchObject({
      idleTimeoutSeconds: 7200,
    });
    expect(parseSandboxArgs(["create", "--idle", "7d"])).toMatchObject({
      idleTimeoutSeconds: 604_800,
    });
    expect(() => parseSandboxArgs(["create", "--idle", "0"])).toThrow(/--idle must be a duration/);
    expect(() => parseSandboxArgs(["create", "--idle", "1.5m"])).toThrow(/--idle/);
    expect(() => parseSandboxArgs(["create", "--backend", "vm"])).toThrow(
      /--backend must be host or container, got "vm"/,
    );
  });

  it("create --backend sends the backend", async () => {
    const c = proc();
    seen.length = 0;
    expect(await runCli(["sandbox", "create", "--backend", "container"], c.p)).toBe(EXIT.ok);
    expect(c.out.join("")).toBe(`${ID}\n`);
    expect(sentBodies.at(-1)).toEqual({ backend: "container" });
  });
});
