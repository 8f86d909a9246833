/**
 * A sandbox's network namespace on a host that is not root (the container backend's
 * sandbox host runs as uid 1000; decision 183). It cannot bind-mount a namespace file
 * (`NetworkNamespace`), so the bridge process holds it: the bridge starts inside a new
 * user namespace (uid 1000 mapped to itself, owned by the host's user) and a network
 * namespace of that user namespace's, with loopback brought up first; the namespaces
 * live as long as the bridge does. Commands enter both with `nsenter --target <bridge>`,
 * keeping their uid (`--preserve-credentials`), and bubblewrap makes its own user
 * namespace inside as everywhere else.
 */
import type { SandboxNamespace } from "./netns.ts";

/**
 * The argv prefix that starts the bridge in a namespace of its own: `--keep-caps` leaves
 * it the user namespace's capabilities (as ambient ones), so it may bind the proxy's
 * port below 1024 there, which no command (bubblewrap drops every capability) can.
 */
export function bridgeNamespacePrefix(): string[] {
  return [
    ...USER_NET_NAMESPACE,
    "sh",
    "-c",
    // `$0 "$@"`: the bridge's own argv, after loopback is up.
    'ip link set lo up && exec "$0" "$@"',
  ];
}

/**
 * `unshare` into a new user namespace (the caller's uid mapped to itself, capabilities
 * kept) and a network namespace of its own; the command follows.
 */
export const USER_NET_NAMESPACE = [
  "unshare",
  "--user",
  "--map-current-user",
  "--keep-caps",
  "--net",
  "--",
] as const;

/** The namespaces the bridge with process id `pid` holds. */
export class BridgeNamespace implements SandboxNamespace {
  readonly #pid: number;

  constructor(pid: number) {
    this.#pid = pid;
  }

  enter(): string[] {
    return ["nsenter", "--user", "--net", `--target=${this.#pid}`, "--preserve-credentials", "--"];
  }

  /** Nothing to undo: the namespaces go with the bridge, which the sandbox's network stops. */
  async remove(): Promise<void> {}
}
