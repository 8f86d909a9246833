// An agent on the network by policy, end to end, in a container sandbox (issue 25): what
// test/e2e/agent-preview.test.ts does on a sandbox host, through the container backend's
// Worker (global-setup.ts). A real MCP SDK client on the sandbox's own URL and token, and
// a real pi session (faux model, the toolwire/pi extension) whose own sandbox is a
// container, each write a small Node app, run `npm install && node server.js` in the
// background against a registry this test serves at the Docker bridge's address (on the
// sandbox's allow list), share the port with expose_port, and the page is fetched
// through the URL it answered, through the Worker and the container's Durable Object.
// Skips, saying why, where Docker is missing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
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

const missing = inject("containersMissing");
const api = inject("containersApiUrl");
const apiToken = inject("containersApiToken");
const GATEWAY = inject("containersGateway");

describe.skipIf(missing !== "")(
  `an agent in a container sandbox installs, serves and shares its app${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    const dir = mkdtempSync(path.join(tmpdir(), "toolwire-containers-agent-"));
    const sandboxes = new SandboxesClient({ baseUrl: api, token: apiToken });
    const made: string[] = [];
    const sessions: PiSession[] = [];
    let registry: Upstream;
    const allowEntry = () => `${GATEWAY}:${registry.port}`;

    beforeAll(async () => {
      registry = await startTinyRegistry(dir, APP_PACKAGE, GATEWAY);
    });
    afterAll(async () => {
      for (const s of sessions) s.dispose();
      for (const id of made) await sandboxes.remove(id).catch(() => undefined);
      registry?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The sandbox's connection log: the registry reached through its proxy, on its allow list. */
    async function expectRegistryReached(id: string): Promise<void> {
      const log = (await sandboxes.network(id)) as {
        connections: Array<{ host: string; port: number; allowed: boolean }>;
      };
      expect(log.connections).toContainEqual(
        expect.objectContaining({ host: GATEWAY, port: registry.port, allowed: true }),
      );
    }

    it("MCP: npm install && node server.js in the background, expose_port, the page through the URL; around the proxy nothing", async () => {
      const created = await sandboxes.create({
        backend: "container",
        network: { allow: [allowEntry()] },
      });
      made.push(created.id);
      const client = await connectV1(`${api}/mcp/sandboxes/${created.id}`, created.token);
      try {
        const exposed = await runMcpAgent(client, allowEntry());
        expect(await appPage(exposed, api)).toEqual({ status: 200, text: APP_PAGE });
        await expectRegistryReached(created.id);
        const bypass = await client.call("bash", {
          command: `curl -sS --noproxy '*' --max-time 5 http://${allowEntry()}/${APP_PACKAGE}; echo "exit $?"`,
        });
        expect(textOf(bypass)).toMatch(/Failed to connect|Couldn't connect/);
        expect(textOf(bypass)).toContain("exit 7");
      } finally {
        await client.close();
      }
    });

    it("pi: a session whose own sandbox is a container does the same", async () => {
      const agent = await runPiAgent({ url: api, token: apiToken }, allowEntry(), {
        provider: `cap${Date.now().toString(36)}-faux`,
        backend: "container",
      });
      sessions.push(agent.pi);
      made.push(agent.sandboxId);
      expect(agent.sandboxId).toMatch(/^sbx_container_/);
      expect(await appPage(agent.exposed, api)).toEqual({ status: 200, text: APP_PAGE });
      await expectRegistryReached(agent.sandboxId);
    });
  },
);
