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
  /** Connections it handed out and still open: they end with the sandbox, as a bridge's did. */
  readonly #open = new Set<Socket>();
  #stopped = false;

  constructor(namespaceFile: string, spawner: () => Spawner | null, fallback: IngressBridge) {
    this.#namespaceFile = namespaceFile;
    this.#spawner = spawner;
    this.#fallback = fallback;
  }

  async connect(port: number): Promise<Socket> {
    const ended = () => Object.assign(new Error("the sandbox has ended"), { code: "ENOENT" });
    if (this.#stopped) throw ended();
    const spawner = this.#spawner();
    if (!spawner) return this.#fallback.connect(port);
    const socket = await spawner.connectIn(this.#namespaceFile, port);
    if (this.#stopped) {
      socket.destroy();
      throw ended();
    }
    this.#open.add(socket);
    socket.once("close", () => this.#open.delete(socket));
    return socket;
  }

  /** Ends every connection it handed out, and the bridge's. */
  stop(): void {
    this.#stopped = true;
    for (const socket of this.#open) socket.destroy();
    this.#fallback.stop();
  }
}
