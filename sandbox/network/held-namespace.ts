/**
 * A sandbox's network namespace on a host that is not root (the container backend's
 * sandbox host runs as uid 1000; decision 183). It cannot bind-mount a namespace file
 * (`NetworkNamespace`), so the child that makes the proxy's socket starts inside a new
 * user namespace (uid 1000 mapped to itself, owned by the host's user) and a network
 * namespace of that user namespace's, with loopback brought up first. Before that child
 * exits, the host opens both namespaces' files and keeps the descriptors: they hold the
 * namespaces with no process left in them (decision 254). Commands enter both through
 * the host's `/proc/<pid>/fd/<n>`, keeping their uid (`--preserve-credentials`), and
 * bubblewrap makes its own user namespace inside as everywhere else.
 */
import { closeSync, openSync } from "node:fs";
import type { SandboxNamespace } from "./netns.ts";

/**
 * The argv prefix that starts a command in a namespace of its own: `--keep-caps` leaves
 * it the user namespace's capabilities (as ambient ones), so it may bind the proxy's
 * port below 1024 there, which no command (bubblewrap drops every capability) can.
 */
export function ownNamespacePrefix(): string[] {
  return [
    ...USER_NET_NAMESPACE,
    "sh",
    "-c",
    // `$0 "$@"`: the command's own argv, after loopback is up.
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

/** The user and network namespaces the host holds by descriptor. */
export class HeldNamespace implements SandboxNamespace {
  #user: number;
  #net: number;

  private constructor(user: number, net: number) {
    this.#user = user;
    this.#net = net;
  }

  /** Takes hold of the namespaces process `pid` is in (it must still be alive). */
  static hold(pid: number): HeldNamespace {
    const user = openSync(`/proc/${pid}/ns/user`, "r");
    try {
      return new HeldNamespace(user, openSync(`/proc/${pid}/ns/net`, "r"));
    } catch (err) {
      closeSync(user);
      throw err;
    }
  }

  enter(): string[] {
    const fd = (n: number) => `/proc/${process.pid}/fd/${n}`;
    return [
      "nsenter",
      `--user=${fd(this.#user)}`,
      `--net=${fd(this.#net)}`,
      "--preserve-credentials",
      "--",
    ];
  }

  /** Lets both go: the kernel frees them once no process is left in them. */
  async remove(): Promise<void> {
    if (this.#user < 0) return;
    closeSync(this.#user);
    closeSync(this.#net);
    this.#user = -1;
    this.#net = -1;
  }
}
