/**
 * The one table of which addresses are not the public internet, shared by `web_fetch`
 * (the Worker) and the sandbox's egress proxy (the sandbox host). The ranges are
 * `ipaddr.js`'s (IANA's special-purpose registries); an IPv6 address that carries an
 * IPv4 one (v4-mapped `::ffff:a.b.c.d`, v4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) is judged by the IPv4 address it reaches.
 */
import ipaddr from "ipaddr.js";

/** What a range is called in a refusal; a range not named here is spelt from its id. */
const LABELS: Record<string, string> = {
  linkLocal: "link-local",
  uniqueLocal: "unique-local",
  carrierGradeNat: "shared (carrier-grade NAT)",
};

function label(range: string): string {
  return LABELS[range] ?? range.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
}

function classifyV4(addr: ipaddr.IPv4): string | null {
  const range = addr.range();
  return range === "unicast" ? null : label(range);
}

/** The IPv4 address an IPv6 one reaches, and how, or null when it carries none. */
function embeddedV4(addr: ipaddr.IPv6): [ipaddr.IPv4, string] | null {
  const p = addr.parts;
  const zero = (from: number, to: number) => p.slice(from, to).every((g) => g === 0);
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible); :: and ::1 are IPv6's own.
  if (zero(0, 5) && p[5] === 0xffff) return [v4(p[6]!, p[7]!), "IPv4 in IPv6"];
  if (zero(0, 6) && !(p[6] === 0 && p[7]! <= 1)) return [v4(p[6]!, p[7]!), "IPv4 in IPv6"];
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) {
    return [v4(p[6]!, p[7]!), "IPv4 via NAT64"];
  }
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!), "IPv4 via 6to4"];
  return null;
}

/**
 * Why `ip` (an IPv4 or IPv6 address, no brackets) is not a public address, or null when
 * it is one; an unparseable string is refused as such.
 * @example addressClass("169.254.169.254") // "link-local"
 * @example addressClass("::ffff:127.0.0.1") // "loopback (IPv4 in IPv6)"
 * @example addressClass("8.8.8.8") // null
 */
export function addressClass(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return "not an IP address";
  const addr = ipaddr.parse(ip);
  if (addr.kind() === "ipv4") return classifyV4(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  const inner = embeddedV4(v6);
  if (inner !== null) {
    const why = classifyV4(inner[0]);
    return why === null ? null : `${why} (${inner[1]})`;
  }
  const range = v6.range();
  return range === "unicast" ? null : label(range);
}

/**
 * Why a URL's host is not public, when that shows without resolving it: an IP literal
 * (the WHATWG parser has already made it canonical) or a `localhost` name. Null for any
 * other name (the caller resolves it, or, in a Worker, cannot).
 * @example hostAddressClass(new URL("http://[::1]/")) // "loopback"
 */
export function hostAddressClass(url: URL): string | null {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback (localhost)";
  if (host.startsWith("[") && host.endsWith("]")) return addressClass(host.slice(1, -1));
  return ipaddr.IPv4.isValidFourPartDecimal(host) ? addressClass(host) : null;
}
