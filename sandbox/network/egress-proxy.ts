import { lookup as dnsLookup } from "node:dns/promises";
import { rm } from "node:fs/promises";
import * as net from "node:net";
import type { EgressDecision, EgressPolicy } from "../../src/protocol/network-policy.ts";
import type { ConnectionLog, ConnectionRecord } from "./connection-log.ts";

/** Largest request head (request line and headers) the proxy reads. */
const MAX_HEAD_BYTES = 16 * 1024;

/** How the proxy turns a name into addresses; injectable so a test can play a rebinding resolver. */
export type Lookup = (host: string) => Promise<string[]>;

/**
 * How the proxy opens a connection to an address it checked; `onread` carries what the
 * upstream sends (the proxy reads into a buffer of its own, see `#downReader`).
 */
type Dial = (to: { host: string; port: number; onread: net.OnReadOpts }) => net.Socket;

/** An upstream is first read 64 KiB at a time, as Node reads any socket. */
const FIRST_READ_BYTES = 64 * 1024;
/**
 * A read that fills its buffer doubles the next one, up to this, and a read that fills
 * less than half halves it: a bulk download is carried a MiB per read and write, about
 * twice the rate of 64 KiB reads (BENCHMARKS.md, "the egress proxy reads up to a MiB at a
 * time"), while a connection that sends little, or has gone quiet, holds 64 KiB.
 */
const MAX_READ_BYTES = 1024 * 1024;

const systemLookup: Lookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

interface EgressProxyOptions {
  sandboxId: string;
  /** Host-only Unix socket the sandbox's bridge carries each connection to. */
  socketPath: string;
  /** The sandbox's current policy (a `PUT` replaces it; open connections keep theirs). */
  policy: () => EgressPolicy;
  log: ConnectionLog;
  /** Bytes both ways the sandbox may move in all; past it new connections are refused and open ones closed. */
  egressBytes: number;
  /** Connections open at once. */
  maxConnections: number;
  lookup?: Lookup;
  dial?: Dial;
}

interface Target {
  connect: boolean;
  host: string;
  port: number;
  /** For a forwarded HTTP request: its head rewritten to origin form. */
  head: Buffer | null;
}

/**
 * A sandbox's egress proxy: an HTTP forward proxy (absolute-form requests) and `CONNECT`
 * tunnels, on a Unix socket only the host and the sandbox's bridge reach. Each request
 * is decided by the sandbox's `EgressPolicy` (the name, then each address the name
 * resolved to, once); it connects to the very address that passed, counts bytes into
 * the connection log and refuses with one line the command can read.
 * @example const proxy = await EgressProxy.listen({ sandboxId, socketPath, policy, log, egressBytes, maxConnections: 64 });
 */
export class EgressProxy {
  readonly #options: EgressProxyOptions;
  readonly #server: net.Server;
  /** Sockets of open connections, both ends. */
  readonly #open = new Set<net.Socket>();
  #connections = 0;

  private constructor(options: EgressProxyOptions) {
    this.#options = options;
    this.#server = net.createServer((client) => this.#accept(client));
  }

  static async listen(options: EgressProxyOptions): Promise<EgressProxy> {
    const proxy = new EgressProxy(options);
    await rm(options.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once("error", reject);
      proxy.#server.listen(options.socketPath, resolve);
    });
    return proxy;
  }

  /**
   * Takes connections from another listening socket too (the one the bridge made inside
   * the sandbox's namespace); closed with the proxy.
   */
  accept(listener: net.Server): void {
    listener.on("connection", (client) => this.#accept(client));
    this.#server.once("close", () => listener.close());
  }

  /** Closes every open connection (the byte limit reached, or the sandbox removed). */
  closeAll(): void {
    for (const socket of this.#open) socket.destroy();
  }

  async close(): Promise<void> {
    this.closeAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: net.Socket): void {
    let head = Buffer.alloc(0);
    client.on("error", () => client.destroy());
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) answer(client, 431, "request head too large");
        return;
      }
      client.off("data", onData);
      client.pause();
      const target = parseHead(head.subarray(0, end).toString("latin1"));
      if (typeof target === "string") {
        answer(client, 400, `toolwire egress proxy: ${target}`);
        return;
      }
      void this.#handle(client, target, head.subarray(end + 4));
    };
    client.on("data", onData);
  }

  async #handle(client: net.Socket, target: Target, rest: Buffer): Promise<void> {
    const o = this.#options;
    const policy = o.policy();
    const { host, port } = target;
    const asked = Date.now();
    // A refused connection never opens: its duration is the time the refusal took.
    const refuse = (status: number, decision: EgressDecision, address: string | null) => {
      o.log.add({ host, port, address, ...decision }).durationMs = Date.now() - asked;
      answer(client, status, policy.refusal(o.sandboxId, host, port, decision));
    };
    if (o.log.bytes >= o.egressBytes) {
      const why = `egress byte limit reached (limits.egressBytes ${o.egressBytes})`;
      return refuse(403, { allowed: false, why }, null);
    }
    if (this.#connections >= o.maxConnections) {
      const why = `${o.maxConnections} connections already open (the most a sandbox may have)`;
      return refuse(429, { allowed: false, why }, null);
    }
    const named = policy.decide(host, port);
    if (!named.allowed) return refuse(403, named, null);
    let addresses: string[];
    try {
      addresses = net.isIP(host.replace(/^\[|\]$/g, ""))
        ? [host.replace(/^\[|\]$/g, "")]
        : await (o.lookup ?? systemLookup)(host);
    } catch {
      return refuse(502, { allowed: false, why: `${host} does not resolve` }, null);
    }
    const decisions = addresses.map((a) => [a, policy.decide(host, port, a)] as const);
    const passed = decisions.find(([, d]) => d.allowed);
    if (!passed) {
      const [address, decision] = decisions[0] ?? [null, { allowed: false, why: "no address" }];
      return refuse(403, decision, address);
    }
    const [address, decision] = passed;
    const record = o.log.add({ host, port, address, ...decision });
    const started = Date.now();
    const dial = o.dial ?? ((to) => net.connect(to));
    const upstream = dial({
      host: address,
      port,
      onread: this.#downReader(record, client, () => upstream),
    });
    this.#open.add(client);
    this.#open.add(upstream);
    this.#connections++;
    // Set once the client is told why: its answer ends it, not a destroy that could drop it.
    let answered = false;
    const done = () => {
      if (record.durationMs !== null) return;
      record.durationMs = Date.now() - started;
      this.#connections--;
      this.#open.delete(client);
      this.#open.delete(upstream);
      if (!answered) client.destroy();
      upstream.destroy();
    };
    let connected = false;
    upstream.once("error", (err: NodeJS.ErrnoException) => {
      if (!connected) {
        record.why = `${decision.why}; connecting failed (${err.code ?? err.message})`;
        answered = true;
        answer(
          client,
          502,
          `toolwire egress proxy: ${host}:${port} (${address}) did not answer: ${err.code ?? err.message}`,
        );
      }
      done();
    });
    client.once("close", done);
    upstream.once("close", done);
    upstream.once("connect", () => {
      connected = true;
      if (target.connect) client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      else this.#carry(record, upstream, target.head!, "up");
      if (rest.length > 0) this.#carry(record, upstream, rest, "up");
      this.#pumpUp(record, client, upstream);
      upstream.once("end", () => client.end());
      client.resume();
    });
  }

  /**
   * Copies what the client sends to the upstream, counting each chunk, with backpressure
   * (Node's own reads: a socket the proxy accepted takes no `onread`).
   */
  #pumpUp(record: ConnectionRecord, client: net.Socket, upstream: net.Socket): void {
    client.on("data", (chunk: Buffer) => {
      if (!this.#carry(record, upstream, chunk, "up")) {
        client.pause();
        upstream.once("drain", () => client.resume());
      }
    });
    client.once("end", () => upstream.end());
  }

  /**
   * Carries what the upstream sends to the client, counting it. The proxy reads into a
   * buffer of its own, and reads nothing more while the client has not taken all of the
   * last write: a write the kernel did not take at once still holds the buffer's bytes.
   */
  #downReader(
    record: ConnectionRecord,
    client: net.Socket,
    upstream: () => net.Socket,
  ): net.OnReadOpts {
    let buffer = Buffer.allocUnsafe(FIRST_READ_BYTES);
    return {
      buffer: () => buffer,
      callback: (read, into) => {
        let waiting = false;
        const chunk = Buffer.from(into.buffer, into.byteOffset, read);
        this.#carry(record, client, chunk, "down", () => {
          if (waiting) upstream().resume();
        });
        waiting = client.writableLength > 0;
        // Resized only when no write holds it: a connection holds one buffer, no more.
        if (waiting) return false;
        if (read === buffer.length && buffer.length < MAX_READ_BYTES) {
          buffer = Buffer.allocUnsafe(buffer.length * 2);
        } else if (read < buffer.length / 2 && buffer.length > FIRST_READ_BYTES) {
          buffer = Buffer.allocUnsafe(buffer.length / 2);
        }
        return true;
      },
    };
  }

  /** Writes what the byte budget still allows of `chunk`; at the limit, closes every connection. */
  #carry(
    record: ConnectionRecord,
    to: net.Socket,
    chunk: Buffer,
    way: "up" | "down",
    written?: () => void,
  ): boolean {
    const o = this.#options;
    const budget = o.egressBytes - o.log.bytes;
    const part = chunk.length > budget ? chunk.subarray(0, Math.max(0, budget)) : chunk;
    o.log.count(record, way === "up" ? part.length : 0, way === "down" ? part.length : 0);
    const flowing = part.length > 0 ? to.write(part, written) : true;
    if (part.length < chunk.length) {
      record.why = `${record.why}; closed at the egress byte limit (limits.egressBytes ${o.egressBytes})`;
      to.end(() => this.closeAll());
      setTimeout(() => this.closeAll(), 100).unref();
    }
    return flowing;
  }
}

/** Answers `status` with a one-line body and closes. */
function answer(client: net.Socket, status: number, line: string): void {
  const body = `${line}\n`;
  const reason =
    {
      400: "Bad Request",
      403: "Forbidden",
      429: "Too Many Requests",
      431: "Request Header Fields Too Large",
      502: "Bad Gateway",
    }[status] ?? "Error";
  client.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  // A client that never closes its end is let go once the answer had time to leave.
  setTimeout(() => client.destroy(), ANSWER_LINGER_MS).unref();
}

/** How long a refused client may keep its connection open after its answer. */
const ANSWER_LINGER_MS = 5_000;

const HOP_BY_HOP = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive"]);

/** The request's target, or what is wrong with it. */
function parseHead(head: string): Target | string {
  const [line = "", ...headers] = head.split("\r\n");
  const [method, target, version] = line.split(" ");
  if (!method || !target || !version?.startsWith("HTTP/")) return "not an HTTP request";
  if (method === "CONNECT") {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:]+):(\d{1,5})$/.exec(target);
    if (!m) return `CONNECT needs host:port, got '${target}'`;
    return { connect: true, host: m[1]!.toLowerCase(), port: Number(m[2]), head: null };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `a proxy request names a full http:// URL, got '${target}'`;
  }
  if (url.protocol !== "http:") {
    return `only http:// is forwarded; ${url.protocol}// goes through CONNECT`;
  }
  const kept = headers.filter(
    (h) => !HOP_BY_HOP.has(h.slice(0, h.indexOf(":")).trim().toLowerCase()),
  );
  const rewritten = [
    `${method} ${url.pathname}${url.search} ${version}`,
    ...kept,
    "connection: close",
    "",
    "",
  ];
  return {
    connect: false,
    host: url.hostname,
    port: Number(url.port || 80),
    head: Buffer.from(rewritten.join("\r\n"), "latin1"),
  };
}
