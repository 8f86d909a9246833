import type { Socket } from "node:net";
import type { Spawner } from "../exec/spawner.ts";
import type { IngressBridge } from "./ingress-bridge.ts";

/**
 * The way in of preview URLs for one sandbox: connections to ports of its own loopback.
 * `connect` rejects with an error whose code says why (`ECONNREFUSED`: nothing listens).
 */
export interface WayIn {
  connect(port: number): Promise<Socket>;
  /** For good: the sandbox has ended. */
  stop(): void;
}

/**
 * The way in on a root host (decision 187): the spawner makes each connection inside the
 * namespace held at `namespaceFile` and hands it to the host, so nothing runs for the way
 * in and no socket of it is on the host's disk. Where the spawner has ended, the bridge
 * process of decision 182 takes over.
 */
export class SpawnerWayIn implements WayIn {
  readonly #namespaceFile: string;
  readonly #spawner: () => Spawner | null;
  readonly #fallback: IngressBridge;
  #stopped = false;

  constructor(namespaceFile: string, spawner: () => Spawner | null, fallback: IngressBridge) {
    this.#namespaceFile = namespaceFile;
    this.#spawner = spawner;
    this.#fallback = fallback;
  }

  connect(port: number): Promise<Socket> {
    if (this.#stopped) {
      return Promise.reject(Object.assign(new Error("the sandbox has ended"), { code: "ENOENT" }));
    }
    const spawner = this.#spawner();
    return spawner ? spawner.connectIn(this.#namespaceFile, port) : this.#fallback.connect(port);
  }

  stop(): void {
    this.#stopped = true;
    this.#fallback.stop();
  }
}
