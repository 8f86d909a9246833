import { describe, expect, it } from "vitest";
import { addressClass, hostAddressClass } from "../../../src/protocol/address-class.ts";

const reason = (url: string) => hostAddressClass(new URL(url));

describe("the address classes web_fetch and the egress proxy share", () => {
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
    ["http://0.0.0.0/", "unspecified"],
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
    ["http://[2002:7f00:1::]/", "loopback (IPv4 via 6to4)"],
    ["http://224.0.0.1/", "multicast"],
    ["http://192.0.2.1/", "reserved"],
    ["http://240.0.0.1/", "reserved"],
    ["http://[2001:db8::1]/", "reserved"],
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
    "http://[2002:808:808::]/",
    "http://localhost.example.com/",
    "http://127.example.com/",
  ];
  for (const url of allowed) {
    it(`allows ${url}`, () => expect(reason(url)).toBeNull());
  }
});

describe("addressClass on resolved addresses (what the egress proxy checks)", () => {
  it("names the metadata address, the v4-mapped loopback and an unparseable string", () => {
    expect(addressClass("169.254.169.254")).toBe("link-local");
    expect(addressClass("::ffff:127.0.0.1")).toBe("loopback (IPv4 in IPv6)");
    expect(addressClass("127.0.0.1.example")).toBe("not an IP address");
  });

  it("lets public addresses of both families through", () => {
    expect(addressClass("8.8.8.8")).toBeNull();
    expect(addressClass("2606:4700::1111")).toBeNull();
  });
});
