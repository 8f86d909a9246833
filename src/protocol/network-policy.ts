/**
 * A sandbox's network policy and the one place that decides each connection (allow or
 * deny, and why) from the sandbox's list and the address a name resolved to. The egress
 * proxy only carries bytes and records what `EgressPolicy.decide` said (decision 181).
 */
import { addressClass } from "./address-class.ts";

/** `network` of `POST /v1/sandboxes` and the body of `PUT /v1/sandboxes/:id/network`. */
export interface NetworkPolicy {
  /** `host`, `host:port` or `*.domain[:port]`; without a port, 80 and 443. Empty: no network. */
  allow: string[];
}

/** Entries one policy may hold. */
const MAX_ALLOW_ENTRIES = 256;

/** Ports an entry without one allows. */
const DEFAULT_ALLOW_PORTS: readonly number[] = [80, 443];

/** One parsed entry of an allow list. */
interface AllowRule {
  entry: string;
  /** Lower-case host name or IP literal (an IPv6 one without brackets); for `*.x`, `x`. */
  host: string;
  /** True for `*.domain`: any name under it, not the domain itself. */
  wildcard: boolean;
  ports: readonly number[];
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

function validName(host: string): boolean {
  if (host.length > 253) return false;
  if (IPV4.test(host)) return host.split(".").every((n) => Number(n) <= 255);
  return host.split(".").every((label) => LABEL.test(label));
}

/** Parses one entry, or says what is wrong with it. */
function parseEntry(entry: string): AllowRule | string {
  const text = entry.trim().toLowerCase();
  let host = text;
  let ports = DEFAULT_ALLOW_PORTS;
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) ports = [Number(bracketed[2])];
    if (addressClass(host) === "not an IP address") return `'${entry}' is not an IPv6 address`;
  } else {
    const colon = text.lastIndexOf(":");
    if (colon >= 0) {
      const port = text.slice(colon + 1);
      if (!/^\d{1,5}$/.test(port)) return `'${entry}' has a port that is not a number`;
      host = text.slice(0, colon);
      ports = [Number(port)];
    }
  }
  if (ports.some((p) => p < 1 || p > 65535)) return `'${entry}' has a port outside 1-65535`;
  const wildcard = host.startsWith("*.");
  if (wildcard) host = host.slice(2);
  if (!bracketed && !validName(host)) {
    return `'${entry}' is not host, host:port or *.domain[:port] (a host is a DNS name or an IP address)`;
  }
  return { entry, host, wildcard, ports };
}

/**
 * Checks a policy as a request sent it: an object with `allow`, an array of at most
 * `MAX_ALLOW_ENTRIES` strings, each a valid entry. Answers the policy or a message that
 * names the first bad entry.
 * @example checkNetworkPolicy({ allow: ["registry.npmjs.org", "*.github.com:22"] })
 */
export function checkNetworkPolicy(value: unknown): NetworkPolicy | string {
  const allow = (value as { allow?: unknown } | null)?.allow;
  if (typeof value !== "object" || value === null || !Array.isArray(allow)) {
    return "network must be { allow: [entries] }";
  }
  const extra = Object.keys(value).find((k) => k !== "allow");
  if (extra !== undefined) return `network.${extra} is not a policy field (only allow)`;
  if (allow.length > MAX_ALLOW_ENTRIES) {
    return `network.allow has ${allow.length} entries; at most ${MAX_ALLOW_ENTRIES}`;
  }
  for (const [i, entry] of allow.entries()) {
    if (typeof entry !== "string") return `network.allow[${i}] must be a string`;
    const rule = parseEntry(entry);
    if (typeof rule === "string") return `network.allow[${i}]: ${rule}`;
  }
  return { allow: allow as string[] };
}

/** What the policy said about one connection, as the log keeps it. */
export interface EgressDecision {
  allowed: boolean;
  /** The rule that allowed it, or why it was refused, in a few words. */
  why: string;
}

/** What the host operator sets beside every sandbox's own list. */
export interface EgressGuard {
  /** `SANDBOX_EGRESS_ALLOW_PRIVATE=1`: loopback and private addresses pass (local development, tests). */
  allowPrivate: boolean;
  /** Ports refused on every non-public address whatever the list says: the host's and the Worker's own. */
  reservedPorts: readonly number[];
}

/**
 * One sandbox's list, parsed once, deciding each connection: first the name and port
 * (`decide(host, port)`, before anything is resolved), then each address it resolved to
 * (`decide(host, port, address)`); the proxy connects only to an address that passed.
 * @example new EgressPolicy({ allow: ["example.com"] }, guard).decide("example.com", 443, "93.184.215.14")
 */
export class EgressPolicy {
  readonly policy: NetworkPolicy;
  readonly #rules: AllowRule[];
  readonly #guard: EgressGuard;

  /** Throws on a policy `checkNetworkPolicy` would refuse. */
  constructor(policy: NetworkPolicy, guard: EgressGuard) {
    const checked = checkNetworkPolicy(policy);
    if (typeof checked === "string") throw new Error(checked);
    this.policy = checked;
    this.#rules = checked.allow.map((e) => parseEntry(e) as AllowRule);
    this.#guard = guard;
  }

  decide(host: string, port: number, address?: string): EgressDecision {
    const name = host
      .toLowerCase()
      .replace(/^\[(.*)\]$/, "$1")
      .replace(/\.$/, "");
    const rule = this.#rules.find(
      (r) => r.ports.includes(port) && (r.wildcard ? name.endsWith(`.${r.host}`) : name === r.host),
    );
    if (!rule) {
      return {
        allowed: false,
        why: this.#rules.length === 0 ? "no network policy" : "not on the allow list",
      };
    }
    if (address === undefined) return { allowed: true, why: `allowed by '${rule.entry}'` };
    const kind = addressClass(address);
    if (kind === null) return { allowed: true, why: `allowed by '${rule.entry}'` };
    if (!this.#guard.allowPrivate || kind === "not an IP address") {
      return { allowed: false, why: `${address} is a ${kind} address` };
    }
    if (this.#guard.reservedPorts.includes(port)) {
      return {
        allowed: false,
        why: `${address}:${port} is the sandbox host's or the Worker's own`,
      };
    }
    return { allowed: true, why: `allowed by '${rule.entry}' (private addresses allowed)` };
  }

  /**
   * The one line a refused command reads, naming what it asked for and the list.
   * @example policy.refusal("sbx_default_…", "example.org", 443, decision)
   */
  refusal(sandboxId: string, host: string, port: number, decision: EgressDecision): string {
    const list = this.policy.allow.length === 0 ? "nothing" : this.policy.allow.join(", ");
    return `toolwire: ${host}:${port} refused (${decision.why}); sandbox ${sandboxId} allows only: ${list}`;
  }
}
