/**
 * A sandbox on the network by its policy, as its commands see it: real jails in their
 * own network namespace, curl, npm and git going out through the sandbox's proxy to
 * servers on this machine's loopback (private addresses allowed, as an operator does
 * for local development), and everything else refused and on the record.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startGitRepo,
  startTinyRegistry,
  type Upstream,
} from "../../../support/loopback-upstreams.ts";
import { execId, fold } from "../harness.ts";
import { type EgressTestHost, startEgressTestHost } from "./egress-host.ts";

const dir = mkdtempSync(path.join(tmpdir(), "tw-egress-"));
let host: EgressTestHost;
let upstream: Server;
let port: number;
let registry: Upstream;
let git: Upstream;

beforeAll(async () => {
  upstream = createServer((req, res) => res.end(`upstream saw ${req.method} ${req.url}\n`));
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  port = (upstream.address() as AddressInfo).port;
  registry = await startTinyRegistry(dir, "tiny-answer");
  git = await startGitRepo(dir);
  const loopback = ["127.0.0.1"];
  host = await startEgressTestHost(
    { "up.test": loopback, "reg.test": loopback, "git.test": loopback },
    { allowPrivate: true },
  );
}, 60_000);
afterAll(async () => {
  await host?.close();
  upstream?.close();
  registry?.close();
  git?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a sandbox's egress, by its policy", () => {
  it("reaches a listed host through the proxy the jail's environment names", async () => {
    const sbx = await host.create({ allow: [`up.test:${port}`] });
    const ran = await sbx.run(`env | grep -i _proxy | sort; curl -sS http://up.test:${port}/hi`);
    expect(ran.text).toContain("HTTPS_PROXY=http://127.0.0.1:900");
    expect(ran.text).toContain("no_proxy=localhost,127.0.0.1,::1");
    expect(ran.text).toContain("upstream saw GET /hi");
  });

  it("npm installs a package from a registry on the list", async () => {
    const sbx = await host.create({ allow: [`reg.test:${registry.port}`] });
    const ran = await sbx.run(
      `npm install --no-audit --no-fund --registry http://reg.test:${registry.port}/ tiny-answer 2>&1 | tail -3; node -e 'console.log("answer", require("tiny-answer").answer)'`,
    );
    expect(ran.text).toContain("answer 42");
  }, 60_000);

  it("git clones over HTTP from a server on the list", async () => {
    const sbx = await host.create({ allow: [`git.test:${git.port}`] });
    const ran = await sbx.run(
      `git clone -q http://git.test:${git.port}/repo.git r && cat r/README`,
    );
    expect(ran.text).toContain("hello from git");
  }, 30_000);

  it("refuses a host not on the list with one line naming it, the sandbox and its list", async () => {
    const sbx = await host.create({ allow: [`up.test:${port}`] });
    const ran = await sbx.run(`curl -sS -w ' %{http_code}' http://up.test:${port + 1}/; echo`);
    expect(ran.text).toContain(
      `toolwire: up.test:${port + 1} refused (not on the allow list); sandbox ${sbx.id} allows only: up.test:${port}\n 403`,
    );
    const https = await sbx.run("curl -sS https://example.com/ 2>&1; echo exit=$?");
    expect(https.text).toMatch(/CONNECT tunnel failed, response 403/);
  });

  it("with no policy there is no network, and a command that skips the proxy reaches nothing", async () => {
    const sbx = await host.create();
    const ran = await sbx.run(`curl -sS http://up.test:${port}/; echo`);
    expect(ran.text).toContain("refused (no network policy)");
    const open = await host.create({ allow: [`up.test:${port}`] });
    const direct = await open.run(
      `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${port}/ 2>&1; echo exit=$?`,
    );
    expect(direct.text).toMatch(/Failed to connect|Couldn't connect/);
    expect(direct.text).not.toContain("upstream saw");
  });

  it("never reaches the host's own port or the Worker's, even with private addresses allowed", async () => {
    const hostPort = Number(new URL(host.url).port);
    const sbx = await host.create({ allow: [`up.test:${hostPort}`, "up.test:8787"] });
    const ran = await sbx.run(
      `curl -sS http://up.test:${hostPort}/healthz; echo; curl -sS http://up.test:8787/; echo`,
    );
    expect(ran.text).toContain(`127.0.0.1:${hostPort} is the sandbox host's or the Worker's own`);
    expect(ran.text).toContain("127.0.0.1:8787 is the sandbox host's or the Worker's own");
    expect(ran.text).not.toContain('"ok":true');
  });

  it("keeps every attempt on the record, and a PUT replaces the policy of a live sandbox", async () => {
    const sbx = await host.create({ allow: [`up.test:${port}`] });
    await sbx.run(`curl -sS http://up.test:${port}/one; curl -sS http://up.test:1/`);
    const put = await host.request("PUT", `/v1/sandboxes/${sbx.id}/network`, { allow: [] });
    expect(put.status).toBe(200);
    const after = await sbx.run(`curl -sS http://up.test:${port}/two`);
    expect(after.text).toContain("refused (no network policy)");
    const log = (await (await host.request("GET", `/v1/sandboxes/${sbx.id}/network`)).json()) as {
      policy: { allow: string[] };
      totals: { connections: number; allowed: number; denied: number; bytesDown: number };
      connections: {
        host: string;
        port: number;
        allowed: boolean;
        why: string;
        bytesDown: number;
      }[];
    };
    expect(log.policy).toEqual({ allow: [] });
    expect(log.connections.map((c) => [c.port, c.allowed])).toEqual([
      [port, true],
      [1, false],
      [port, false],
    ]);
    expect(log.connections[0]!.why).toBe(
      `allowed by 'up.test:${port}' (private addresses allowed)`,
    );
    // The answer's head and its body, as the upstream sent them.
    expect(log.connections[0]!.bytesDown).toBeGreaterThan("upstream saw GET /one\n".length);
    expect(log.totals).toMatchObject({ connections: 3, allowed: 1, denied: 2 });
    const view = (await (await host.request("GET", `/v1/sandboxes/${sbx.id}`)).json()) as {
      network: { policy: unknown; totals: unknown };
    };
    expect(view.network).toEqual({ policy: { allow: [] }, totals: log.totals });
  });

  it("answers a bad entry with a 400 that names it, and changes nothing", async () => {
    const sbx = await host.create({ allow: ["example.com"] });
    const put = await host.request("PUT", `/v1/sandboxes/${sbx.id}/network`, {
      allow: ["ok.example", "bad host:99"],
    });
    expect(put.status).toBe(400);
    expect(await put.text()).toContain("network.allow[1]: 'bad host:99' is not host, host:port");
    const res = await host.request("POST", "/v1/sandboxes", {
      id: "sbx_default_00000000000000000001",
      network: { allow: ["x.test:99999"] },
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("'x.test:99999' has a port outside 1-65535");
    const log = (await (await host.request("GET", `/v1/sandboxes/${sbx.id}/network`)).json()) as {
      policy: unknown;
    };
    expect(log.policy).toEqual({ allow: ["example.com"] });
  });
});

describe("the way in: the bridge's host-only socket", () => {
  it("reaches a server a background command started in the sandbox, and only that sandbox's", async () => {
    const a = await host.create();
    const b = await host.create();
    await a.run("mkdir site && echo page of A > site/index.html");
    // A server lives as long as the call that started it (background jobs are calls too).
    const serverCall = execId();
    const serving = fold(
      a.client.exec({
        execId: serverCall,
        command: "cd site && exec python3 -m http.server 8000 --bind 127.0.0.1",
      }),
    );
    const get = async (id: string) => {
      const socket = await host.sandboxes.find(id).network!.connectInto(8000);
      socket.end("GET / HTTP/1.0\r\n\r\n");
      let got = "";
      for await (const chunk of socket) got += chunk;
      return got;
    };
    let page = "";
    // Python's start is slow on a loaded machine: wait for it up to 60 s.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !page.includes("page of A")) {
      page = await get(a.id).catch(() => "");
      if (!page) await new Promise((r) => setTimeout(r, 100));
    }
    expect(page).toContain("200 OK");
    expect(page).toContain("page of A");
    // B's namespace has its own loopback: A's server is not there.
    await expect(get(b.id)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    // Nor on the host's own loopback: nothing of the jail listens where the host lives.
    const direct = await fetch("http://127.0.0.1:8000/").then(
      (r) => r.text(),
      () => "unreachable",
    );
    expect(direct).not.toContain("page of A");
    await a.client.kill(serverCall);
    await serving;
  }, 90_000);
});

describe("without SANDBOX_EGRESS_ALLOW_PRIVATE", () => {
  it("refuses a listed name that resolves to loopback", async () => {
    const strict = await startEgressTestHost({ "up.test": ["127.0.0.1"] });
    try {
      const sbx = await strict.create({ allow: [`up.test:${port}`] });
      const ran = await sbx.run(`curl -sS http://up.test:${port}/; echo`);
      expect(ran.text).toContain(`refused (127.0.0.1 is a loopback address)`);
      expect(ran.text).not.toContain("upstream saw");
    } finally {
      await strict.close();
    }
  });
});
