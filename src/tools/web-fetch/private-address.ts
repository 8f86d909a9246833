/**
 * Which URLs `web_fetch` refuses by default: loopback, private, link-local and other
 * non-public addresses written as IP literals, and `localhost` names. The WHATWG URL
 * parser has already normalised the host (decimal, hex and octal IPv4 forms become
 * dotted quads; IPv6 is compressed and lower-cased), so only canonical forms remain.
 * A Worker cannot resolve DNS, so a public name that resolves to a private address is
 * not caught here (see docs/decisions/053-web-fetch.md).
 */

/** [first address as a 32-bit number, prefix length, label] */
const IPV4_BLOCKED: [number, number, string][] = [
  [ipv4(0, 0, 0, 0), 8, "this-network"],
  [ipv4(10, 0, 0, 0), 8, "private"],
  [ipv4(100, 64, 0, 0), 10, "shared (carrier-grade NAT)"],
  [ipv4(127, 0, 0, 0), 8, "loopback"],
  [ipv4(169, 254, 0, 0), 16, "link-local"],
  [ipv4(172, 16, 0, 0), 12, "private"],
  [ipv4(192, 168, 0, 0), 16, "private"],
  [ipv4(255, 255, 255, 255), 32, "broadcast"],
];

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inPrefix(addr: number, base: number, bits: number): boolean {
  if (bits === 0) return true;
  const mask = (~0 << (32 - bits)) >>> 0;
  return (addr & mask) >>> 0 === (base & mask) >>> 0;
}

function classifyIPv4(addr: number): string | null {
  for (const [base, bits, label] of IPV4_BLOCKED) if (inPrefix(addr, base, bits)) return label;
  return null;
}

function parseIPv4(host: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  const [a = 0, b = 0, c = 0, d = 0] = parts;
  return ipv4(a, b, c, d);
}

/** The eight 16-bit groups of an IPv6 address, or null if `host` is not one. */
function parseIPv6(host: string): number[] | null {
  let text = host;
  const tail: number[] = [];
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4 !== null) {
    const addr = parseIPv4(v4[2] ?? "");
    if (addr === null) return null;
    tail.push(addr >>> 16, addr & 0xffff);
    text = v4[1] ?? "";
    if (text.endsWith(":") && !text.endsWith("::")) text = text.slice(0, -1);
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const head = groups(halves[0] ?? "");
  const rest = halves.length === 2 ? groups(halves[1] ?? "") : [];
  const known = head.length + rest.length + tail.length;
  if (head.concat(rest).some((g) => Number.isNaN(g) || g > 0xffff)) return null;
  if (halves.length === 1 && known !== 8) return null;
  if (known > 8) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

function classifyIPv6(g: number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0 && g6 === 0 && g7 <= 1) return g7 === 1 ? "loopback" : "unspecified";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) carry an IPv4 address.
  if (upperZero && (g5 === 0xffff || g5 === 0)) {
    const label = classifyIPv4(((g6 << 16) | g7) >>> 0);
    return label === null ? null : `${label} (IPv4 in IPv6)`;
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    const label = classifyIPv4(((g6 << 16) | g7) >>> 0);
    return label === null ? null : `${label} (IPv4 via NAT64)`;
  }
  if ((g0 & 0xfe00) === 0xfc00) return "unique-local";
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  return null;
}

/**
 * Why `url`'s host is not a public address, or null when it may be fetched.
 * @example privateAddressReason(new URL("http://10.1.2.3/")) // "private"
 * @example privateAddressReason(new URL("http://[::1]/")) // "loopback"
 */
export function privateAddressReason(url: URL): string | null {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback (localhost)";
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseIPv6(host.slice(1, -1));
    return groups === null ? "unparseable IPv6" : classifyIPv6(groups);
  }
  const v4 = parseIPv4(host);
  return v4 === null ? null : classifyIPv4(v4);
}
