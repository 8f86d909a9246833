import { mkdir, rm } from "node:fs/promises";
import * as net from "node:net";
import path from "node:path";
import {
  type EgressGuard,
  EgressPolicy,
  type NetworkPolicy,
} from "../../src/protocol/network-policy.ts";
import { BRIDGE_PROXY_PORT, type Bridge, startBridge } from "./bridge.ts";
import { BridgeNamespace, bridgeNamespacePrefix } from "./bridge-namespace.ts";
import { ConnectionLog, type ConnectionRecord, type EgressTotals } from "./connection-log.ts";
import { EgressProxy } from "./egress-proxy.ts";
import type { EgressSettings } from "./egress-settings.ts";
import { NetworkNamespace, type SandboxNamespace } from "./netns.ts";

/** What the jail's commands find in their environment: the proxy, and what bypasses it. */
export function proxyEnv(): Record<string, string> {
  const proxy = `http://127.0.0.1:${BRIDGE_PROXY_PORT}`;
  const none = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: none,
    no_proxy: none,
  };
}

/** What `GET /v1/sandboxes/:id/network` answers. */
interface NetworkView {
  policy: NetworkPolicy;
  totals: EgressTotals;
  connections: ConnectionRecord[];
}

/** Longest Unix socket path Linux takes (sun_path, with its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * One sandbox's network (decisions 180, 181): its namespace (loopback only), the bridge
 * inside it, the egress proxy on a host-only socket, its policy and its connection log.
 * `dir` is a host folder no jail mounts.
 * @example const network = await SandboxNetwork.open(dir, id, { allow: [] }, 1 << 30, settings);
 */
export class SandboxNetwork {
  readonly namespace: SandboxNamespace;
  readonly log: ConnectionLog;
  readonly #proxy: EgressProxy;
  readonly #bridge: Bridge;
  readonly #inSocket: string;
  /** Shared with the proxy, which reads it for each new connection. */
  readonly #current: { policy: EgressPolicy };
  readonly #guard: EgressGuard;

  private constructor(
    parts: {
      namespace: SandboxNamespace;
      log: ConnectionLog;
      proxy: EgressProxy;
      bridge: Bridge;
      inSocket: string;
    },
    current: { policy: EgressPolicy },
    guard: EgressGuard,
  ) {
    this.namespace = parts.namespace;
    this.log = parts.log;
    this.#proxy = parts.proxy;
    this.#bridge = parts.bridge;
    this.#inSocket = parts.inSocket;
    this.#current = current;
    this.#guard = guard;
  }

  static async open(
    dir: string,
    sandboxId: string,
    policy: NetworkPolicy,
    egressBytes: number,
    settings: EgressSettings,
  ): Promise<SandboxNetwork> {
    const guard = { allowPrivate: settings.allowPrivate, reservedPorts: settings.reservedPorts };
    const current = { policy: new EgressPolicy(policy, guard) };
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const egressSocket = path.join(dir, "egress.sock");
    const inSocket = path.join(dir, "in.sock");
    if (Buffer.byteLength(inSocket) > MAX_SOCKET_PATH) {
      throw new Error(
        `the sandbox's socket path is past Linux's ${MAX_SOCKET_PATH} bytes; set a shorter SANDBOXES_DIR`,
      );
    }
    // Sockets a host killed before it could close them would refuse to listen again.
    await Promise.all([rm(egressSocket, { force: true }), rm(inSocket, { force: true })]);
    // Root holds the namespace with a bind mount; any other host has its bridge hold it
    // in a user namespace of its own (the container backend; decision 183).
    const mounted =
      process.getuid?.() === 0 ? await NetworkNamespace.create(path.join(dir, "ns")) : null;
    let namespace: SandboxNamespace | null = mounted;
    let proxy: EgressProxy | null = null;
    try {
      const log = new ConnectionLog();
      proxy = await EgressProxy.listen({
        sandboxId,
        socketPath: egressSocket,
        policy: () => current.policy,
        log,
        egressBytes,
        maxConnections: settings.maxConnections,
        lookup: settings.lookup,
      });
      const bridge = await startBridge(mounted?.enter() ?? bridgeNamespacePrefix(), inSocket);
      namespace = mounted ?? new BridgeNamespace(bridge.child.pid as number);
      proxy.accept(bridge.proxyListener);
      return new SandboxNetwork({ namespace, log, proxy, bridge, inSocket }, current, guard);
    } catch (err) {
      await proxy?.close();
      await namespace?.remove();
      throw err;
    }
  }

  get policy(): NetworkPolicy {
    return this.#current.policy.policy;
  }

  /** Replaces the policy (throws on a bad one): new connections follow it, open ones keep going. */
  setPolicy(policy: NetworkPolicy): void {
    this.#current.policy = new EgressPolicy(policy, this.#guard);
  }

  view(): NetworkView {
    return { policy: this.policy, totals: { ...this.log.totals }, connections: this.log.entries() };
  }

  /**
   * A connection to `port` on the sandbox's own loopback, through the bridge (the way in
   * of preview URLs), or an error whose code says why (`ECONNREFUSED`: nothing listens).
   */
  connectInto(port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.#inSocket);
      let line = "";
      socket.once("error", reject);
      socket.write(`${port}\n`);
      const onData = (chunk: Buffer) => {
        line += chunk.toString("latin1");
        const end = line.indexOf("\n");
        if (end < 0) return;
        socket.off("data", onData);
        socket.pause();
        const answer = line.slice(0, end);
        const rest = Buffer.from(line.slice(end + 1), "latin1");
        if (answer !== "ok") {
          socket.destroy();
          reject(Object.assign(new Error(answer), { code: answer.replace(/^error /, "") }));
          return;
        }
        socket.removeListener("error", reject);
        if (rest.length > 0) socket.unshift(rest);
        resolve(socket);
      };
      socket.on("data", onData);
    });
  }

  async close(): Promise<void> {
    this.#bridge.stop();
    await this.#proxy.close();
    await this.namespace.remove();
  }
}
