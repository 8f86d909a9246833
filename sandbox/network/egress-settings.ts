import { execFileSync } from "node:child_process";
import type { EgressGuard } from "../../src/protocol/network-policy.ts";
import { positiveInt } from "../env-number.ts";
import type { Lookup } from "./egress-proxy.ts";
import { USER_NET_NAMESPACE } from "./held-namespace.ts";

/** The host operator's egress settings, read once at start. */
export interface EgressSettings extends EgressGuard {
  /** False where the host cannot make network namespaces (no jail). */
  available: boolean;
  maxConnections: number;
  /** How names are resolved; tests give their own. */
  lookup?: Lookup;
}

/** Default of `SANDBOX_EGRESS_MAX_CONNECTIONS`: connections one sandbox may hold open at once. */
const DEFAULT_EGRESS_MAX_CONNECTIONS = 64;

/** The Worker's port in local development (`wrangler dev`), reserved unless the operator names others. */
const DEFAULT_RESERVED_PORTS = [8787];

/**
 * Reads `SANDBOX_EGRESS_ALLOW_PRIVATE` (`1`: loopback and private addresses pass, for
 * local development and tests; off by default), `SANDBOX_EGRESS_RESERVED_PORTS` (ports
 * never reached on a non-public address, comma-separated; default the Worker's 8787;
 * the host's own `port` is always added) and `SANDBOX_EGRESS_MAX_CONNECTIONS` (64).
 * Namespaces need the jail (root holds them with a bind mount, any other user in a user
 * namespace the host holds by descriptor; decisions 183, 254): without it, or where this user cannot make
 * that namespace, `available` is false.
 * @example const egress = egressSettingsFromEnv(process.env, 8788, "bwrap");
 */
export function egressSettingsFromEnv(
  env: Record<string, string | undefined>,
  hostPort: number,
  isolation: "bwrap" | "none",
): EgressSettings {
  const allow = env.SANDBOX_EGRESS_ALLOW_PRIVATE ?? "";
  if (!["", "0", "1"].includes(allow)) {
    throw new Error(`SANDBOX_EGRESS_ALLOW_PRIVATE must be 1 or 0, got '${allow}'`);
  }
  const listed = env.SANDBOX_EGRESS_RESERVED_PORTS;
  const reserved =
    listed === undefined || listed === ""
      ? DEFAULT_RESERVED_PORTS
      : listed.split(",").map((p) => {
          const n = Number(p.trim());
          if (!Number.isInteger(n) || n < 1 || n > 65535) {
            throw new Error(
              `SANDBOX_EGRESS_RESERVED_PORTS must be ports separated by commas, got '${listed}'`,
            );
          }
          return n;
        });
  return {
    available: isolation === "bwrap" && (process.getuid?.() === 0 || ownNamespacesWork()),
    allowPrivate: allow === "1",
    reservedPorts: [...new Set([...reserved, hostPort])],
    maxConnections: positiveInt(
      env,
      "SANDBOX_EGRESS_MAX_CONNECTIONS",
      DEFAULT_EGRESS_MAX_CONNECTIONS,
    ),
  };
}

/**
 * Whether a host that is not root can make a namespace of its own (decision 183):
 * tried once at start, so that a host where user namespaces are refused to `unshare`
 * (some distributions allow them to bubblewrap alone) keeps its sandboxes without a
 * network, as before, instead of failing every create.
 */
function ownNamespacesWork(): boolean {
  try {
    const [command, ...args] = USER_NET_NAMESPACE;
    execFileSync(command, [...args, "ip", "link", "set", "lo", "up"], {
      stdio: "ignore",
      timeout: 10_000,
    });
    return true;
  } catch {
    return false;
  }
}
