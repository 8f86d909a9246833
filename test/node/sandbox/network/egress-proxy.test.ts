/**
 * The egress proxy on its own socket, driven as the bridge drives it (raw bytes over the
 * Unix socket): resolving once, byte counts, the byte limit and the connection cap.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectionLog } from "../../../../sandbox/network/connection-log.ts";
import { EgressProxy } from "../../../../sandbox/network/egress-proxy.ts";
import { EgressPolicy } from "../../../../src/protocol/network-policy.ts";

const SANDBOX = "sbx_default_0123456789abcdef0123";
const dir = mkdtempSync(path.join(tmpdir(), "tw-proxy-"));
let sockets = 0;

/** An upstream on loopback that answers every connection with `size` bytes of 'x', then closes. */
let sender: net.Server;
let senderPort: number;

beforeAll(async () => {
  sender = net.createServer((socket) => {
    socket.once("data", (chunk) => {
      const size = Number(chunk.toString().trim());
      socket.end(Buffer.alloc(size, "x"));
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => sender.listen(0, "127.0.0.1", r));
  senderPort = (sender.address() as net.AddressInfo).port;
});
afterAll(() => {
  sender.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `size` bytes in which each 8-byte word is its own offset: a byte out of place changes it. */
function numbered(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let at = 0; at + 8 <= size; at += 8) bytes.writeBigUInt64LE(BigInt(at), at);
  return bytes;
}

/**
 * CONNECTs through the proxy and reads what comes back as a slow client does: it reads
 * nothing for `stallMs`, then stops for 30 ms after every MiB, so the proxy's writes wait.
 */
async function slowDownload(socketPath: string, target: string, stallMs = 0): Promise<Buffer> {
  const socket = net.connect(socketPath);
  socket.write(`CONNECT ${target} HTTP/1.1\r\n\r\n`);
  socket.pause();
  await new Promise((r) => setTimeout(r, stallMs));
  const chunks: Buffer[] = [];
  let sinceStop = 0;
  for await (const chunk of socket) {
    chunks.push(chunk as Buffer);
    sinceStop += (chunk as Buffer).length;
    if (sinceStop >= 1 << 20) {
      sinceStop = 0;
      await new Promise((r) => setTimeout(r, 30));
    }
  }
  return Buffer.concat(chunks).subarray(ESTABLISHED.length);
}

/**
 * A loopback upstream that sends each connection `body`: the first `bulk` bytes at once,
 * then the rest 1,000 bytes at a time, a millisecond apart, and closes.
 */
async function bulkUpstream(body: Buffer, bulk = body.length): Promise<[net.Server, number]> {
  const server = net.createServer(async (socket) => {
    socket.on("error", () => {});
    socket.write(body.subarray(0, bulk));
    for (let at = bulk; at < body.length; at += 1000) {
      await new Promise((r) => setTimeout(r, 1));
      socket.write(body.subarray(at, at + 1000));
    }
    socket.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return [server, (server.address() as net.AddressInfo).port];
}

async function proxyWith(
  options: { egressBytes?: number; maxConnections?: number },
  allow: string[],
) {
  const log = new ConnectionLog();
  const policy = new EgressPolicy({ allow }, { allowPrivate: true, reservedPorts: [8787] });
  const socketPath = path.join(dir, `p${sockets++}.sock`);
  const proxy = await EgressProxy.listen({
    sandboxId: SANDBOX,
    socketPath,
    policy: () => policy,
    log,
    egressBytes: options.egressBytes ?? 1 << 30,
    maxConnections: options.maxConnections ?? 64,
    lookup: async () => ["127.0.0.1"],
  });
  return { proxy, log, socketPath };
}

/** CONNECTs through the proxy, sends `send`, and collects everything until the close. */
function tunnel(socketPath: string, target: string, send: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let got = "";
    socket.on("data", (c) => {
      got += c.toString("latin1");
    });
    socket.on("error", () => resolve(got));
    socket.on("close", () => resolve(got));
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    setTimeout(() => socket.write(send), 50);
  });
}

const ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";

describe("the egress proxy", () => {
  it("resolves a name once and connects to the address it checked (no rebinding)", async () => {
    // A resolver that answers a public address first and loopback after that.
    const answers = [["93.184.215.14"], ["127.0.0.1"]];
    let lookups = 0;
    const dialed: string[] = [];
    const log = new ConnectionLog();
    const socketPath = path.join(dir, "rebind.sock");
    const publicOnly = new EgressPolicy(
      { allow: ["rebind.test:443"] },
      { allowPrivate: false, reservedPorts: [] },
    );
    const proxy = await EgressProxy.listen({
      sandboxId: SANDBOX,
      socketPath,
      policy: () => publicOnly,
      log,
      egressBytes: 1 << 30,
      maxConnections: 8,
      lookup: async () => answers[Math.min(lookups++, 1)]!,
      // Nothing leaves this machine: the dial records where it was sent, then fails.
      dial: ({ host, port }) => {
        dialed.push(`${host}:${port}`);
        return net.connect(1, "127.0.0.1");
      },
    });
    const first = await tunnel(socketPath, "rebind.test:443", "");
    const second = await tunnel(socketPath, "rebind.test:443", "");
    await proxy.close();
    expect(lookups).toBe(2);
    expect(dialed).toEqual(["93.184.215.14:443"]);
    expect(first).toContain("502 Bad Gateway");
    expect(second).toContain("403 Forbidden");
    expect(second).toContain("127.0.0.1 is a loopback address");
    const [a, b] = log.entries();
    expect(a).toMatchObject({ host: "rebind.test", address: "93.184.215.14", allowed: true });
    expect(b).toMatchObject({ host: "rebind.test", address: "127.0.0.1", allowed: false });
  });

  it("logs every attempt with the true bytes up and down", async () => {
    const { proxy, log, socketPath } = await proxyWith({}, [`up.test:${senderPort}`]);
    const got = await tunnel(socketPath, `up.test:${senderPort}`, "12345\n");
    await tunnel(socketPath, "other.test:443", "");
    await proxy.close();
    expect(got).toBe(`${ESTABLISHED}${"x".repeat(12345)}`);
    const [ok, refused] = log.entries();
    expect(ok).toMatchObject({ allowed: true, bytesUp: 6, bytesDown: 12345 });
    expect(ok!.durationMs).toBeGreaterThanOrEqual(0);
    expect(refused).toMatchObject({ host: "other.test", port: 443, allowed: false, bytesUp: 0 });
    // Refused, it was never open: a duration, not the null of an open connection.
    expect(refused!.durationMs).toBeGreaterThanOrEqual(0);
    expect(log.totals).toMatchObject({
      connections: 2,
      allowed: 1,
      denied: 1,
      bytesUp: 6,
      bytesDown: 12345,
    });
  });

  it("carries a bulk download byte for byte while its reader falls behind", async () => {
    // 24 MiB: the proxy's reads grow to a MiB, and many of its writes wait on the reader.
    const body = numbered(24 << 20);
    const [upstream, port] = await bulkUpstream(body);
    const { proxy, log, socketPath } = await proxyWith({}, [`up.test:${port}`]);
    const got = await slowDownload(socketPath, `up.test:${port}`);
    await proxy.close();
    upstream.close();
    expect(got.length).toBe(body.length);
    const digest = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    expect(digest(got)).toBe(digest(body));
    expect(log.entries()[0]).toMatchObject({ allowed: true, bytesUp: 0, bytesDown: body.length });
  });

  it("keeps every byte when the reader stalls while the upstream trickles", async () => {
    // The stalled client cannot take the proxy's small writes of the trickle: each one
    // waits, under the write buffer's mark, while the proxy reads the next.
    const body = numbered((8 << 20) + 200_000);
    const [upstream, port] = await bulkUpstream(body, 8 << 20);
    const { proxy, log, socketPath } = await proxyWith({}, [`up.test:${port}`]);
    const got = await slowDownload(socketPath, `up.test:${port}`, 1000);
    await proxy.close();
    upstream.close();
    expect(got.equals(body)).toBe(true);
    expect(log.entries()[0]).toMatchObject({ bytesDown: body.length });
  });

  it("cuts a bulk download at limits.egressBytes to the byte", async () => {
    const limit = (5 << 20) + 12345;
    const body = numbered(16 << 20);
    const [upstream, port] = await bulkUpstream(body);
    const { proxy, log, socketPath } = await proxyWith({ egressBytes: limit }, [`up.test:${port}`]);
    const got = await slowDownload(socketPath, `up.test:${port}`);
    await proxy.close();
    upstream.close();
    expect(got.equals(body.subarray(0, limit))).toBe(true);
    expect(log.bytes).toBe(limit);
    expect(log.entries()[0]!.why).toContain("closed at the egress byte limit");
  });

  describe("limits.egressBytes (1,000 bytes here; the request line is 4 of them)", () => {
    const LIMIT = 1000;
    it("under it, the whole answer passes", async () => {
      const { proxy, log, socketPath } = await proxyWith({ egressBytes: LIMIT }, [
        `up.test:${senderPort}`,
      ]);
      const got = await tunnel(socketPath, `up.test:${senderPort}`, "995\n");
      await proxy.close();
      expect(got.length - ESTABLISHED.length).toBe(995);
      expect(log.bytes).toBe(999);
    });

    it("at it, the whole answer passes and the next connection is refused", async () => {
      const { proxy, log, socketPath } = await proxyWith({ egressBytes: LIMIT }, [
        `up.test:${senderPort}`,
      ]);
      const got = await tunnel(socketPath, `up.test:${senderPort}`, "996\n");
      const next = await tunnel(socketPath, `up.test:${senderPort}`, "1\n");
      await proxy.close();
      expect(got.length - ESTABLISHED.length).toBe(996);
      expect(log.bytes).toBe(LIMIT);
      expect(next).toContain("403 Forbidden");
      expect(next).toContain(`egress byte limit reached (limits.egressBytes ${LIMIT})`);
      expect(next).toContain(SANDBOX);
    });

    it("over it, the answer is cut at the limit and the connection closed", async () => {
      const { proxy, log, socketPath } = await proxyWith({ egressBytes: LIMIT }, [
        `up.test:${senderPort}`,
      ]);
      const got = await tunnel(socketPath, `up.test:${senderPort}`, "5000\n");
      await proxy.close();
      expect(got.length - ESTABLISHED.length).toBe(LIMIT - 5);
      expect(log.bytes).toBe(LIMIT);
      expect(log.entries()[0]!.why).toContain("closed at the egress byte limit");
    });
  });

  it("holds at most maxConnections open: at the cap the next one is a 429", async () => {
    const held = net.createServer(() => {});
    await new Promise<void>((r) => held.listen(0, "127.0.0.1", r));
    const heldPort = (held.address() as net.AddressInfo).port;
    const { proxy, log, socketPath } = await proxyWith({ maxConnections: 2 }, [
      `up.test:${heldPort}`,
    ]);
    const open = (): Promise<[net.Socket, string]> =>
      new Promise((resolve) => {
        const socket = net.connect(socketPath);
        socket.write(`CONNECT up.test:${heldPort} HTTP/1.1\r\n\r\n`);
        socket.once("data", (c) => resolve([socket, c.toString()]));
      });
    const [a, answerA] = await open();
    const [b, answerB] = await open();
    const [c, answerC] = await open();
    expect(answerA).toBe(ESTABLISHED);
    expect(answerB).toBe(ESTABLISHED);
    expect(answerC).toContain("429 Too Many Requests");
    expect(answerC).toContain("2 connections already open");
    a.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const [d, answerD] = await open();
    expect(answerD).toBe(ESTABLISHED);
    for (const s of [b, c, d]) s.destroy();
    await proxy.close();
    held.close();
    expect(log.totals).toMatchObject({ allowed: 3, denied: 1 });
  });
});
