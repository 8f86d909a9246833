import { mkdir, rm, rmdir } from "node:fs/promises";
import type { Server } from "node:net";
import path from "node:path";
import { sharedSpawner } from "../exec/spawner.ts";
import { HeldNamespace, ownNamespacePrefix } from "./held-namespace.ts";
import { IngressBridge } from "./ingress-bridge.ts";
import { NetworkNamespace, type SandboxNamespace } from "./netns.ts";
import { BRIDGE_PROXY_PORT, takeProxyListener } from "./proxy-listener.ts";
import { SpawnerWayIn, type WayIn } from "./way-in.ts";

/**
 * The part of a sandbox's network that belongs to no sandbox yet (decision 225): its
 * namespace, loopback up, with the proxy's listening socket made inside it, in a host
 * folder no jail mounts. The egress proxy, which carries the sandbox's id, policy and
 * byte budget, is added when a sandbox takes it (`SandboxNetwork.attach`). No process
 * runs for it (decision 254).
 */
export interface ReadyNetwork {
  dir: string;
  namespace: SandboxNamespace;
  /** `127.0.0.1:900` inside the namespace, the host's to accept on. */
  proxyListener: Server;
  /** The way in of preview URLs: the spawner's on a root host, else a bridge started when first used. */
  ingress: WayIn;
  /** Where the sandbox's egress proxy will listen. */
  egressSocket: string;
}

/** Longest Unix socket path Linux takes (sun_path, with its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Makes the namespace (at `<dir>/ns` on a root host) and the proxy's socket in it;
 * throws (after undoing what it made) when it cannot. On a root host the spawner makes
 * the socket; elsewhere a short-lived Node child does, the slow part.
 * @example const ready = await prepareNetwork("/srv/sandboxes/sbx_…/net");
 */
export async function prepareNetwork(dir: string): Promise<ReadyNetwork> {
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
  // Root holds the namespace with a bind mount; any other host holds it by descriptor,
  // in a user namespace of its own (the container backend; decisions 183, 254).
  const mounted =
    process.getuid?.() === 0 ? await NetworkNamespace.create(path.join(dir, "ns")) : null;
  let held: HeldNamespace | null = null;
  try {
    const proxyListener =
      (mounted && (await listenBySpawner(mounted.file))) ||
      (await takeProxyListener(mounted?.enter() ?? ownNamespacePrefix(), (pid) => {
        if (!mounted) held = HeldNamespace.hold(pid);
      }));
    const namespace = (mounted ?? held) as SandboxNamespace;
    const bridge = new IngressBridge(() => namespace.enter(), inSocket);
    const ingress = mounted ? new SpawnerWayIn(mounted.file, sharedSpawner, bridge) : bridge;
    return { dir, namespace, proxyListener, ingress, egressSocket };
  } catch (err) {
    await (mounted ?? (held as HeldNamespace | null))?.remove();
    throw err;
  }
}

/**
 * The proxy's socket in the namespace held at `file`, made by the spawner without a
 * process (decision 277); null where there is no spawner or it could not (the Node child
 * of `takeProxyListener` makes it then).
 */
async function listenBySpawner(file: string): Promise<Server | null> {
  return (
    (await sharedSpawner()
      ?.listenIn(file, BRIDGE_PROXY_PORT)
      .catch(() => null)) ?? null
  );
}

/**
 * Stops the way in, closes the proxy's socket, lets the namespace go and removes the
 * folder's sockets (and the folder, when nothing else is in it).
 */
export async function discardNetwork(ready: ReadyNetwork): Promise<void> {
  ready.ingress.stop();
  ready.proxyListener.close();
  await ready.namespace.remove();
  const inSocket = path.join(ready.dir, "in.sock");
  await Promise.all([rm(ready.egressSocket, { force: true }), rm(inSocket, { force: true })]);
  await rmdir(ready.dir).catch(() => {});
}
