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
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxesClient } from "../../src/client/sandboxes.ts";
import { SANDBOX_ENTRY } from "../../src/pi/session-sandbox.ts";
import { connectV1, type ToolResult } from "../support/e2e/mcp/clients.ts";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";
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
const PACKAGE = "tiny-answer";
const APP_PORT = 3000;

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
  registry = await startTinyRegistry(temp("toolwire-e2e-registry-"), PACKAGE, REGISTRY_HOST);
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

/** The agent's calls, in order: the app's files, install and start, read on, share. */
function agentSteps(jobId: string): Array<{ tool: string; args: Record<string, unknown> }> {
  const server = `const http = require("node:http");
const { answer } = require("${PACKAGE}");
http.createServer((req, res) => res.end(\`answer \${answer} from ${PACKAGE}\\n\`))
  .listen(${APP_PORT}, "127.0.0.1", () => console.log("listening on ${APP_PORT}"));
`;
  return [
    {
      tool: "write",
      args: {
        path: "app/package.json",
        content: JSON.stringify({
          name: "app",
          private: true,
          dependencies: { [PACKAGE]: "1.0.0" },
        }),
      },
    },
    {
      tool: "write",
      args: { path: "app/.npmrc", content: `registry=http://${allowEntry()}/\n` },
    },
    { tool: "write", args: { path: "app/server.js", content: server } },
    {
      tool: "bash",
      args: {
        command: "cd app && npm install --no-audit --no-fund && node server.js",
        background: true,
      },
    },
    { tool: "job_output", args: { id: jobId, wait: 30 } },
    { tool: "expose_port", args: { port: APP_PORT, expiresInSeconds: 600 } },
  ];
}

/** The path form in expose_port's answer: `… (for clients: <url>).` */
function pathUrlOf(answer: string): string {
  const url = /for clients: (\S+)\)/.exec(answer)?.[1] ?? "";
  expect(url, answer).toMatch(new RegExp(`^${api}/p/[a-z2-7]{58}/$`));
  return url;
}

/** The page at `url` once the app answers (npm install may still run); its last answer otherwise. */
async function page(url: string): Promise<{ status: number; text: string }> {
  let res = await fetch(url);
  for (let i = 0; i < 150 && res.status !== 200; i++) {
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    res = await fetch(url);
  }
  return { status: res.status, text: await res.text() };
}

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
    const run = `ap${Date.now().toString(36)}`;
    const jobId = `${run}-job`;
    const steps = agentSteps(jobId).map((step, i) =>
      fauxAssistantMessage(
        fauxToolCall(step.tool, step.args, { id: step.tool === "bash" ? jobId : `${run}-${i}` }),
        { stopReason: "toolUse" },
      ),
    );
    const pi = await startPiSession(
      { url: api, token: apiToken },
      [...steps, fauxAssistantMessage(fauxText("shared"))],
      { sandbox: null, allow: allowEntry(), provider: `${run}-faux` },
    );
    sessions.push(pi);
    await pi.session.prompt("install the app, start it and share it");

    const id = pi.session.sessionManager
      .getEntries()
      .filter((e) => e.type === "custom" && e.customType === SANDBOX_ENTRY)
      .map((e) => (e as { data: { id: string } }).data.id)[0] as string;
    made.push(id);
    const results = pi.session.messages.filter((m) => m.role === "toolResult") as unknown as {
      toolName: string;
      content: { text?: string }[];
      isError: boolean;
    }[];
    expect(results.map((r) => r.toolName)).toEqual(agentSteps(jobId).map((s) => s.tool));
    for (const r of results) expect(r.isError, r.content[0]?.text).toBe(false);
    const exposed =
      results
        .at(-1)
        ?.content.map((c) => c.text ?? "")
        .join("") ?? "";

    const served = await page(pathUrlOf(exposed));
    expect(served).toEqual({ status: 200, text: `answer 42 from ${PACKAGE}\n` });
    await expectRegistryReached(id);
  }, 180_000);

  it("MCP: the same through a client on the sandbox's own URL and token; a command that skips the proxy reaches nothing", async () => {
    const created = await sandboxes.create({ network: { allow: [allowEntry()] } });
    made.push(created.id);
    const client = await connectV1(`${api}/mcp/sandboxes/${created.id}`, created.token);
    try {
      const text = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("");
      const jobId = `mcp-agent-${Date.now().toString(36)}`;
      let exposed = "";
      for (const step of agentSteps(jobId)) {
        const result = await client.call(
          step.tool,
          step.args,
          step.tool === "bash" ? { meta: { "io.toolwire/callId": jobId } } : {},
        );
        expect(result.isError ?? false, `${step.tool}: ${text(result)}`).toBe(false);
        exposed = text(result);
      }
      const served = await page(pathUrlOf(exposed));
      expect(served).toEqual({ status: 200, text: `answer 42 from ${PACKAGE}\n` });
      await expectRegistryReached(created.id);

      // Around the proxy, the registry is not there: the namespace holds only loopback.
      const bypass = await client.call("bash", {
        command: `curl -sS --noproxy '*' --max-time 5 http://${allowEntry()}/${PACKAGE}; echo "exit $?"`,
      });
      expect(text(bypass)).toMatch(/Failed to connect|Couldn't connect/);
      expect(text(bypass)).toContain("exit 7");
    } finally {
      await client.close();
    }
  }, 180_000);
});
