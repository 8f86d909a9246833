import type * as net from "node:net";
import {
  type EgressGuard,
  EgressPolicy,
  type NetworkPolicy,
} from "../../src/protocol/network-policy.ts";
import { ConnectionLog, type ConnectionRecord, type EgressTotals } from "./connection-log.ts";
import { EgressProxy } from "./egress-proxy.ts";
import type { EgressSettings } from "./egress-settings.ts";
import type { SandboxNamespace } from "./netns.ts";
import { BRIDGE_PROXY_PORT } from "./proxy-listener.ts";
import { discardNetwork, prepareNetwork, type ReadyNetwork } from "./ready-network.ts";

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
export interface NetworkView {
  policy: NetworkPolicy;
  totals: EgressTotals;
  connections: ConnectionRecord[];
}

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
  readonly #ready: ReadyNetwork;
  /** Shared with the proxy, which reads it for each new connection. */
  readonly #current: { policy: EgressPolicy };
  readonly #guard: EgressGuard;

  private constructor(
    ready: ReadyNetwork,
    log: ConnectionLog,
    proxy: EgressProxy,
    current: { policy: EgressPolicy },
    guard: EgressGuard,
  ) {
    this.namespace = ready.namespace;
    this.log = log;
    this.#proxy = proxy;
    this.#ready = ready;
    this.#current = current;
    this.#guard = guard;
  }

  /** Makes a network of its own in `dir` (its slow part included) and attaches it. */
  static async open(
    dir: string,
    sandboxId: string,
    policy: NetworkPolicy,
    egressBytes: number,
    settings: EgressSettings,
  ): Promise<SandboxNetwork> {
    return SandboxNetwork.attach(
      await prepareNetwork(dir),
      sandboxId,
      policy,
      egressBytes,
      settings,
    );
  }

  /**
   * Gives sandbox `sandboxId` the namespace and bridge of `ready` (made ahead or just
   * now), with its egress proxy and policy; on failure `ready` is discarded.
   */
  static async attach(
    ready: ReadyNetwork,
    sandboxId: string,
    policy: NetworkPolicy,
    egressBytes: number,
    settings: EgressSettings,
  ): Promise<SandboxNetwork> {
    const guard = { allowPrivate: settings.allowPrivate, reservedPorts: settings.reservedPorts };
    let proxy: EgressProxy | null = null;
    try {
      const current = { policy: new EgressPolicy(policy, guard) };
      const log = new ConnectionLog();
      proxy = await EgressProxy.listen({
        sandboxId,
        socketPath: ready.egressSocket,
        policy: () => current.policy,
        log,
        egressBytes,
        maxConnections: settings.maxConnections,
        lookup: settings.lookup,
      });
      proxy.accept(ready.proxyListener);
      return new SandboxNetwork(ready, log, proxy, current, guard);
    } catch (err) {
      await proxy?.close();
      await discardNetwork(ready);
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
   * A connection to `port` on the sandbox's own loopback, through its way in (preview
   * URLs), or an error whose code says why (`ECONNREFUSED`: nothing listens).
   */
  connectInto(port: number): Promise<net.Socket> {
    return this.#ready.ingress.connect(port);
  }

  async close(): Promise<void> {
    await this.#proxy.close();
    await discardNetwork(this.#ready);
  }
}
