// An agent on the network by policy, end to end (issue 25): a real pi session (faux model,
// the toolwire/pi extension) and a real MCP SDK client each write a small Node app whose
// one dependency comes from an npm registry this test serves on loopback, run
// `npm install && node server.js` in the background in a sandbox whose allow list names
// that registry, share the port with expose_port and the page is fetched through the URL
// it answered. The sandbox host and Worker are this file's own: the shared stack's host
// refuses private addresses, as it should (SANDBOX_EGRESS_ALLOW_PRIVATE is off).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxesClient } from "../../src/client/sandboxes.ts";
import {
  APP_PACKAGE,
  APP_PAGE,
  appPage,
  runMcpAgent,
  runPiAgent,
  textOf,
} from "../support/e2e/agent-app.ts";
import { connectV1 } from "../support/e2e/mcp/clients.ts";
import type { PiSession } from "../support/e2e/pi/session.ts";
import { startTinyRegistry, type Upstream } from "../support/loopback-upstreams.ts";
import {
  freePort,
  HOST,
  ROOT,
  type Started,
  startNode,
  startWranglerDev,
  stopGroup,
  waitUntilUp,
} from "../support/processes.ts";

// The jail's NO_PROXY names 127.0.0.1 (the sandbox's own servers), so a registry on the
// host's loopback is named by another address of 127/8, which goes through the proxy.
const REGISTRY_HOST = "127.0.0.2";

const dirs: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
const secret = () => randomBytes(24).toString("base64url");
const apiToken = secret();

let registry: Upstream;
let host: Started;
let worker: Started;
let api: string;
let sandboxes: SandboxesClient;
const made: string[] = [];
const sessions: PiSession[] = [];

beforeAll(async () => {
  registry = await startTinyRegistry(temp("toolwire-e2e-registry-"), APP_PACKAGE, REGISTRY_HOST);
  const sandboxRoot = temp("toolwire-e2e-net-ws-");
  dirs.push(`${sandboxRoot}-sandboxes`, `${sandboxRoot}.spill`);
  const sandboxToken = secret();
  const [hostPort, workerPort, inspectorPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  api = `http://${HOST}:${workerPort}`;
  host = startNode([path.join(ROOT, "sandbox/main.ts")], {
    SANDBOX_TOKEN: sandboxToken,
    HOST,
    PORT: String(hostPort),
    SANDBOX_ROOT: sandboxRoot,
    // The registry is on loopback; the Worker's port stays refused to every sandbox.
    SANDBOX_EGRESS_ALLOW_PRIVATE: "1",
    SANDBOX_EGRESS_RESERVED_PORTS: String(workerPort),
  });
  worker = startWranglerDev({
    port: workerPort,
    inspectorPort,
    persistTo: temp("toolwire-e2e-net-state-"),
    vars: {
      API_TOKEN: apiToken,
      SUBSCRIBE_SECRET: secret(),
      SANDBOX_TOKEN: sandboxToken,
      SANDBOXES: JSON.stringify({ default: `http://${HOST}:${hostPort}` }),
      PUBLIC_URL: api,
    },
  });
  await Promise.all([
    waitUntilUp(`http://${HOST}:${hostPort}/healthz`, host),
    waitUntilUp(`${api}/healthz`, worker),
  ]);
  sandboxes = new SandboxesClient({ baseUrl: api, token: apiToken });
}, 120_000);

afterAll(async () => {
  for (const s of sessions) s.dispose();
  for (const id of made) await sandboxes?.remove(id).catch(() => undefined);
  await Promise.all([worker && stopGroup(worker.child), host && stopGroup(host.child)]);
  registry?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

const allowEntry = () => `${REGISTRY_HOST}:${registry.port}`;

/** The sandbox's connection log: the registry reached through its proxy, on its allow list. */
async function expectRegistryReached(id: string): Promise<void> {
  const log = (await sandboxes.network(id)) as {
    connections: Array<{ host: string; port: number; allowed: boolean }>;
  };
  expect(log.connections).toContainEqual(
    expect.objectContaining({ host: REGISTRY_HOST, port: registry.port, allowed: true }),
  );
}

describe("an agent installs from a registry on its allow list, serves and shares its app", () => {
  it("pi: npm install && node server.js in the background, expose_port, the page through the URL", async () => {
    const agent = await runPiAgent({ url: api, token: apiToken }, allowEntry(), {
      provider: `ap${Date.now().toString(36)}-faux`,
    });
    sessions.push(agent.pi);
    made.push(agent.sandboxId);
    expect(await appPage(agent.exposed, api)).toEqual({ status: 200, text: APP_PAGE });
    await expectRegistryReached(agent.sandboxId);
  }, 180_000);

  it("MCP: the same through a client on the sandbox's own URL and token; a command that skips the proxy reaches nothing", async () => {
    const created = await sandboxes.create({ network: { allow: [allowEntry()] } });
    made.push(created.id);
    const client = await connectV1(`${api}/mcp/sandboxes/${created.id}`, created.token);
    try {
      const exposed = await runMcpAgent(client, allowEntry());
      expect(await appPage(exposed, api)).toEqual({ status: 200, text: APP_PAGE });
      await expectRegistryReached(created.id);

      // Around the proxy, the registry is not there: the namespace holds only loopback.
      const bypass = await client.call("bash", {
        command: `curl -sS --noproxy '*' --max-time 5 http://${allowEntry()}/${APP_PACKAGE}; echo "exit $?"`,
      });
      expect(textOf(bypass)).toMatch(/Failed to connect|Couldn't connect/);
      expect(textOf(bypass)).toContain("exit 7");
    } finally {
      await client.close();
    }
  }, 180_000);
});
