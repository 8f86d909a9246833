import { describe, expect, it } from "vitest";
import { privateAddressReason } from "../../../../src/tools/web-fetch/private-address.ts";

const reason = (url: string) => privateAddressReason(new URL(url));

describe("web_fetch address guard", () => {
  const refused: [string, string][] = [
    ["http://127.0.0.1/", "loopback"],
    ["http://127.255.255.254:8080/x", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://localhost/", "loopback (localhost)"],
    ["http://LOCALHOST./", "loopback (localhost)"],
    ["http://api.localhost:3000/", "loopback (localhost)"],
    ["http://10.0.0.1/", "private"],
    ["http://172.16.0.1/", "private"],
    ["http://172.31.255.255/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://169.254.169.254/latest/meta-data", "link-local"],
    ["http://100.64.0.1/", "shared (carrier-grade NAT)"],
    ["http://0.0.0.0/", "this-network"],
    ["http://255.255.255.255/", "broadcast"],
    ["http://[::1]/", "loopback"],
    ["http://[0:0:0:0:0:0:0:1]/", "loopback"],
    ["http://[::]/", "unspecified"],
    ["http://[fc00::1]/", "unique-local"],
    ["http://[fdab:1234::9]/", "unique-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://[febf::1]/", "link-local"],
    ["http://[ff02::1]/", "multicast"],
    ["http://[::ffff:127.0.0.1]/", "loopback (IPv4 in IPv6)"],
    ["http://[::ffff:10.1.2.3]/", "private (IPv4 in IPv6)"],
    ["http://[::192.168.0.1]/", "private (IPv4 in IPv6)"],
    ["http://[64:ff9b::7f00:1]/", "loopback (IPv4 via NAT64)"],
    ["http://[64:ff9b::10.0.0.1]/", "private (IPv4 via NAT64)"],
  ];
  for (const [url, why] of refused) {
    it(`refuses ${url} (${why})`, () => expect(reason(url)).toBe(why));
  }

  const allowed = [
    "https://example.com/",
    "http://8.8.8.8/",
    "http://172.15.255.255/",
    "http://172.32.0.1/",
    "http://192.169.0.1/",
    "http://100.63.255.255/",
    "http://100.128.0.1/",
    "http://169.253.0.1/",
    "http://[2606:4700::1111]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[64:ff9b::808:808]/",
    "http://[fec0::1]/",
    "http://localhost.example.com/",
    "http://127.example.com/",
  ];
  for (const url of allowed) {
    it(`allows ${url}`, () => expect(reason(url)).toBeNull());
  }
});
