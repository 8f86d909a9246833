import { mkdir, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { type Bridge, startBridge } from "./bridge.ts";
import { BridgeNamespace, bridgeNamespacePrefix } from "./bridge-namespace.ts";
import { NetworkNamespace, type SandboxNamespace } from "./netns.ts";

/**
 * The part of a sandbox's network that belongs to no sandbox yet (decision 225): its
 * namespace, loopback up, and the bridge running inside it, in a host folder no jail
 * mounts. The egress proxy, which carries the sandbox's id, policy and byte budget, is
 * added when a sandbox takes it (`SandboxNetwork.attach`).
 */
export interface ReadyNetwork {
  dir: string;
  namespace: SandboxNamespace;
  bridge: Bridge;
  /** The bridge's host-only way in (preview URLs). */
  inSocket: string;
  /** Where the sandbox's egress proxy will listen. */
  egressSocket: string;
}

/** Longest Unix socket path Linux takes (sun_path, with its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Makes the namespace at `<dir>/ns` and starts its bridge; throws (after undoing what
 * it made) when it cannot. This is the slow part of a sandbox's network: the bridge is
 * a Node process of its own.
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
  // Root holds the namespace with a bind mount; any other host has its bridge hold it
  // in a user namespace of its own (the container backend; decision 183).
  const mounted =
    process.getuid?.() === 0 ? await NetworkNamespace.create(path.join(dir, "ns")) : null;
  try {
    const bridge = await startBridge(mounted?.enter() ?? bridgeNamespacePrefix(), inSocket);
    const namespace = mounted ?? new BridgeNamespace(bridge.child.pid as number);
    return { dir, namespace, bridge, inSocket, egressSocket };
  } catch (err) {
    await mounted?.remove();
    throw err;
  }
}

/**
 * Stops the bridge, lets the namespace go and removes the folder's sockets (and the
 * folder, when nothing else is in it).
 */
export async function discardNetwork(ready: ReadyNetwork): Promise<void> {
  ready.bridge.stop();
  await ready.namespace.remove();
  await Promise.all([rm(ready.egressSocket, { force: true }), rm(ready.inSocket, { force: true })]);
  await rmdir(ready.dir).catch(() => {});
}
