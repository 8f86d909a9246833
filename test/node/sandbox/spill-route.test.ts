// GET /v1/exec/:execId/spill against a real host and real commands.
import { execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold, sha256OfCommand, startTestHost, type TestHost } from "./harness.ts";

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

function spill(id: string, headers: Record<string, string> = {}, token = host.token) {
  return fetch(`${host.url}/v1/exec/${id}/spill`, {
    headers: { Authorization: `Bearer ${token}`, ...headers },
  });
}

async function spilled(command: string): Promise<string> {
  const id = execId();
  const f = await fold(host.client.exec({ execId: id, command }));
  expect(f.metadata?.spillPath).toBe(`/toolwire/spill/${id}.log`);
  return id;
}

const sha256 = (bytes: ArrayBuffer) =>
  createHash("sha256").update(Buffer.from(bytes)).digest("hex");

describe("GET /v1/exec/:execId/spill", () => {
  it("streams the complete output of seq 1 200000 as plain text", async () => {
    const id = await spilled("seq 1 200000");
    const res = await spill(id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("content-length")).toBe("1288895");
    expect(sha256(await res.arrayBuffer())).toBe(sha256OfCommand("seq 1 200000"));
  });

  it("a 1-byte range, the last byte, and the first byte past the end", async () => {
    const id = await spilled("seq 1 200000");
    const first = await spill(id, { Range: "bytes=0-0" });
    expect(first.status).toBe(206);
    expect(first.headers.get("content-range")).toBe("bytes 0-0/1288895");
    expect(first.headers.get("content-length")).toBe("1");
    expect(await first.text()).toBe("1");
    const last = await spill(id, { Range: "bytes=1288894-1288894" });
    expect(last.status).toBe(206);
    expect(await last.text()).toBe("\n");
    const past = await spill(id, { Range: "bytes=1288895-" });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe("bytes */1288895");
    expect(((await past.json()) as { error: { message: string } }).error.message).toMatch(
      /starts past the end .* \(1288895 bytes\)/,
    );
  });

  it("a middle range is exactly those bytes", async () => {
    const id = await spilled("seq 1 200000");
    let at = 0;
    for (let n = 1; n < 123456; n++) at += String(n).length + 1;
    const res = await spill(id, { Range: `bytes=${at}-${at + 6}` });
    expect(res.status).toBe(206);
    expect(await res.text()).toBe("123456\n");
  });

  it("an exec without a spill file, and a removed one, are 404s that say so", async () => {
    const small = execId();
    await fold(host.client.exec({ execId: small, command: "echo fits" }));
    const none = await spill(small);
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { message: string } }).error.message).toMatch(
      /no spill file \/toolwire\/spill\/.*\.log .*fit in its window, or the file was removed/,
    );
    const id = await spilled("seq 1 5000");
    rmSync(path.join(host.spillDir, `${id}.log`));
    expect((await spill(id)).status).toBe(404);
  });

  it("needs the host's bearer token", async () => {
    const id = await spilled("seq 1 5000");
    expect((await spill(id, {}, "not-the-token-at-all")).status).toBe(401);
    expect((await fetch(`${host.url}/v1/exec/${id}/spill`)).status).toBe(401);
  });

  it("an exec id that could name another path is refused", async () => {
    for (const bad of ["..%2F..%2Fetc%2Fpasswd", "a.b", "%2E%2E"]) {
      const res = await spill(bad);
      expect([400, 404]).toContain(res.status);
      expect(await res.text()).not.toContain("root:");
    }
  });
});

describe("GET /v1/exec/:execId/spill never reads outside its own file", () => {
  it("a symlink, hard link, FIFO or folder at a spill name answers 404 without blocking or leaking", async () => {
    const outside = mkdtempSync(path.join(tmpdir(), "toolwire-outside-"));
    try {
      const secret = path.join(outside, "secret.txt");
      writeFileSync(secret, "top secret\n");
      // The workspace is a mount of its own (decision 240): a hard link there can only
      // name a file in the workspace.
      const twin = path.join(host.root, "secret.txt");
      writeFileSync(twin, "top secret\n");
      // In the workspace, where commands can plant them, and in the host's own folder.
      for (const dir of [path.join(host.root, ".toolwire/spill"), host.spillDir]) {
        mkdirSync(dir, { recursive: true });
        const [link, hard, fifo, folder] = [execId(), execId(), execId(), execId()];
        symlinkSync(secret, path.join(dir, `${link}.log`));
        linkSync(dir === host.spillDir ? secret : twin, path.join(dir, `${hard}.log`));
        execSync(`mkfifo ${path.join(dir, `${fifo}.log`)}`);
        mkdirSync(path.join(dir, `${folder}.log`));
        for (const id of [link, hard, fifo, folder]) {
          const res = await spill(id);
          expect(res.status).toBe(404);
          const body = await res.text();
          expect(body).not.toContain("top secret");
          expect(body).toContain(`no spill file /toolwire/spill/${id}.log`);
          expect(body).not.toContain(host.spillDir);
          expect(body).not.toContain(host.root);
        }
      }
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("a workspace .toolwire symlinked out of the workspace serves nothing from there", async () => {
    const other = await startTestHost();
    const outside = mkdtempSync(path.join(tmpdir(), "toolwire-outside-"));
    try {
      mkdirSync(path.join(outside, "spill"));
      writeFileSync(path.join(outside, "spill", "abc.log"), "top secret\n");
      symlinkSync(outside, path.join(other.root, ".toolwire"));
      const res = await fetch(`${other.url}/v1/exec/abc/spill`, {
        headers: { Authorization: `Bearer ${other.token}` },
      });
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("top secret");
    } finally {
      await other.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
