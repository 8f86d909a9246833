/**
 * The agent end to end of issue 25, on either backend (test/e2e/agent-preview.test.ts on
 * a sandbox host, test/containers/agent-preview.test.ts in a container): an agent writes
 * a small Node app whose one dependency comes from a registry the test serves, runs
 * `npm install && node server.js` in the background, shares the port with `expose_port`,
 * and the test fetches the page through the URL it answered. Driven by a real pi session
 * (faux model, the toolwire/pi extension) or a real MCP SDK client.
 */
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { expect } from "vitest";
import { SANDBOX_ENTRY } from "../../../src/pi/session-sandbox.ts";
import type { McpTestClient, ToolResult } from "./mcp/clients.ts";
import { type PiSession, startPiSession } from "./pi/session.ts";

/** The app's one dependency, as startTinyRegistry serves it. */
export const APP_PACKAGE = "tiny-answer";
const APP_PORT = 3000;
/** The page the app serves once its dependency is installed. */
export const APP_PAGE = `answer 42 from ${APP_PACKAGE}\n`;

interface AgentStep {
  tool: string;
  args: Record<string, unknown>;
}

/** The agent's calls, in order: the app's files, install and start, read on, share. */
function agentSteps(registry: string, jobId: string): AgentStep[] {
  const server = `const http = require("node:http");
const { answer } = require("${APP_PACKAGE}");
http.createServer((req, res) => res.end(\`answer \${answer} from ${APP_PACKAGE}\\n\`))
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
          dependencies: { [APP_PACKAGE]: "1.0.0" },
        }),
      },
    },
    { tool: "write", args: { path: "app/.npmrc", content: `registry=http://${registry}/\n` } },
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

/** The path form in expose_port's answer (`… (for clients: <url>).`), on the Worker `api`. */
function pathUrlOf(answer: string, api: string): string {
  const url = /for clients: (\S+)\)/.exec(answer)?.[1] ?? "";
  expect(url, answer).toMatch(new RegExp(`^${api}/p/[a-z2-7]{58}/$`));
  return url;
}

/** The app's page through expose_port's `answer`, once it answers (npm install may still run). */
export async function appPage(
  answer: string,
  api: string,
): Promise<{ status: number; text: string }> {
  const url = pathUrlOf(answer, api);
  let res = await fetch(url);
  for (let i = 0; i < 150 && res.status !== 200; i++) {
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    res = await fetch(url);
  }
  return { status: res.status, text: await res.text() };
}

/** What a pi agent did: its session, its sandbox (made for the session) and expose_port's answer. */
interface PiAgentRun {
  pi: PiSession;
  sandboxId: string;
  exposed: string;
}

/**
 * A pi session with a sandbox of its own (`allow` its policy, `backend` its kind) whose
 * faux model makes the agent's calls against `registry` (`host:port`); every call must
 * succeed. The caller disposes of `pi` and deletes the sandbox.
 */
export async function runPiAgent(
  toolwire: { url: string; token: string },
  registry: string,
  options: { provider: string; backend?: "host" | "container" },
): Promise<PiAgentRun> {
  const jobId = `${options.provider}-job`;
  const steps = agentSteps(registry, jobId);
  const replies = steps.map((step, i) =>
    fauxAssistantMessage(
      fauxToolCall(step.tool, step.args, {
        id: step.tool === "bash" ? jobId : `${options.provider}-${i}`,
      }),
      { stopReason: "toolUse" },
    ),
  );
  const pi = await startPiSession(
    toolwire,
    [...replies, fauxAssistantMessage(fauxText("shared"))],
    {
      sandbox: null,
      allow: registry,
      provider: options.provider,
      backend: options.backend,
    },
  );
  await pi.session.prompt("install the app, start it and share it");
  const sandboxId = pi.session.sessionManager
    .getEntries()
    .filter((e) => e.type === "custom" && e.customType === SANDBOX_ENTRY)
    .map((e) => (e as { data: { id: string } }).data.id)[0] as string;
  const results = pi.session.messages.filter((m) => m.role === "toolResult") as unknown as {
    toolName: string;
    content: { text?: string }[];
    isError: boolean;
  }[];
  expect(results.map((r) => r.toolName)).toEqual(steps.map((s) => s.tool));
  for (const r of results) expect(r.isError, `${r.toolName}: ${r.content[0]?.text}`).toBe(false);
  const exposed =
    results
      .at(-1)
      ?.content.map((c) => c.text ?? "")
      .join("") ?? "";
  return { pi, sandboxId, exposed };
}

export const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("");

/** The agent's calls through an MCP `client` on the sandbox's own URL; expose_port's answer. */
export async function runMcpAgent(client: McpTestClient, registry: string): Promise<string> {
  const jobId = `mcp-agent-${Date.now().toString(36)}`;
  let exposed = "";
  for (const step of agentSteps(registry, jobId)) {
    const result = await client.call(
      step.tool,
      step.args,
      step.tool === "bash" ? { meta: { "io.toolwire/callId": jobId } } : {},
    );
    expect(result.isError ?? false, `${step.tool}: ${textOf(result)}`).toBe(false);
    exposed = textOf(result);
  }
  return exposed;
}
