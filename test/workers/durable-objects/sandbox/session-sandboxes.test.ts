// A sandbox per agent session without a create call (issue 29): a run's calls that name
// "sandbox": "new" share the run's own sandbox, another run's do not; each MCP session on
// /mcp/sandbox/new gets its own, removed when the session is deleted. Real sandbox host
// (sandbox-host.global-setup.ts), real DOs, the real MCP SDK client.
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { SandboxView } from "../../../../src/protocol/index.ts";
import { call, expectError, freshId, postJson } from "../../worker/helpers.ts";

interface Made {
  id: string;
  sandbox?: string;
}

async function runBash(runId: string | undefined, command: string) {
  const res = await postJson("/v1/invocations", {
    tool: "bash",
    args: { command },
    sandbox: "new",
    toolCallId: freshId("own"),
    ...(runId === undefined ? {} : { runId }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const made = (await res.json()) as Made;
  const result = (await (await call(`/v1/invocations/${made.id}/result?wait=30`)).json()) as {
    isError: boolean;
    content: { text: string }[];
  };
  return { sandbox: made.sandbox, isError: result.isError, text: result.content[0]?.text ?? "" };
}

async function sandboxView(id: string): Promise<SandboxView> {
  return (await (await call(`/v1/sandboxes/${id}`)).json()) as SandboxView;
}

describe('"sandbox": "new" with a runId: the run owns one sandbox', () => {
  it("a run's calls share its sandbox; another run's calls do not see its files", async () => {
    const [runA, runB] = [freshId("run-a"), freshId("run-b")];
    const first = await runBash(runA, "echo from-a > same.txt && echo written");
    expect(first.text).toContain("written");
    expect(first.sandbox).toMatch(/^sbx_default_[0-9a-f]{20}$/);
    const again = await runBash(runA, "cat same.txt");
    expect(again.sandbox).toBe(first.sandbox);
    expect(again.text).toContain("from-a");

    const other = await runBash(runB, "cat same.txt");
    expect(other.sandbox).toMatch(/^sbx_default_/);
    expect(other.sandbox).not.toBe(first.sandbox);
    expect(other.isError).toBe(true);
    expect(other.text).toContain("No such file");
    expect((await runBash(runB, "echo from-b > same.txt; cat same.txt")).text).toContain("from-b");
    expect((await runBash(runA, "cat same.txt")).text).toContain("from-a");

    const view = await sandboxView(first.sandbox as string);
    expect(view).toMatchObject({ status: "active", name: `run ${runA}` });
    for (const id of [first.sandbox, other.sandbox]) {
      await call(`/v1/sandboxes/${id}`, { method: "DELETE" });
    }
  }, 90_000);

  it("five first calls of one run at once make one sandbox between them", async () => {
    const runId = freshId("run-race");
    const calls = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => runBash(runId, `echo ${n} > n${n}.txt`)),
    );
    const ids = new Set(calls.map((c) => c.sandbox));
    expect(ids.size).toBe(1);
    const listing = await runBash(runId, "ls");
    expect(listing.text.split("\n").filter((l) => l.startsWith("n")).length).toBe(5);
    await call(`/v1/sandboxes/${listing.sandbox}`, { method: "DELETE" });
  }, 90_000);

  it('"new" without a runId is a 400 that says what it needs', async () => {
    const res = await postJson("/v1/invocations", {
      tool: "bash",
      args: { command: "true" },
      sandbox: "new",
    });
    expect(await expectError(res, 400, "bad_request")).toContain('"new" needs a runId');
  });

  it('a sandbox token makes no sandbox of its own: "new" is its 403', async () => {
    const made = await postJson("/v1/sandboxes", {});
    const { id, token } = (await made.json()) as { id: string; token: string };
    const res = await exports.default.fetch("http://toolwire.test/v1/invocations", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        tool: "bash",
        args: { command: "true" },
        sandbox: "new",
        runId: freshId("run-token"),
      }),
    });
    expect(await expectError(res, 403, "forbidden")).toContain(`opens its own sandbox (${id})`);
    await call(`/v1/sandboxes/${id}`, { method: "DELETE" });
  });

  it("a run whose sandbox was deleted gets a 410 saying so, and nothing runs", async () => {
    const runId = freshId("run-ended");
    const first = await runBash(runId, "true");
    await call(`/v1/sandboxes/${first.sandbox}`, { method: "DELETE" });
    const res = await postJson("/v1/invocations", {
      tool: "bash",
      args: { command: "true" },
      sandbox: "new",
      runId,
    });
    expect(await expectError(res, 410, "gone")).toContain(`sandbox ${first.sandbox} is deleted`);
  }, 60_000);
});

/** A 2025-11-25 MCP session (the real SDK client) on `path`, through the Worker. */
async function mcpSession(path: string, headers: Record<string, string> = {}) {
  const client = new Client(
    { name: "toolwire-session-sandbox", version: "1.0.0" },
    { versionNegotiation: { mode: "legacy" } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1${path}`), {
    fetch: (input, init) => {
      const req = new Request(input, init);
      req.headers.set("Host", "127.0.0.1");
      req.headers.set("Authorization", "Bearer test-api-token");
      for (const [name, value] of Object.entries(headers)) req.headers.set(name, value);
      return exports.default.fetch(req);
    },
  });
  await client.connect(transport);
  const bash = async (command: string) => {
    const result = (await client.callTool({ name: "bash", arguments: { command } })) as {
      isError?: boolean;
      content: { text?: string }[];
    };
    return { isError: result.isError === true, text: result.content[0]?.text ?? "" };
  };
  return { client, transport, bash };
}

describe("/mcp/sandbox/new: each MCP session owns a sandbox", () => {
  it("two sessions at once write the same file name and each reads back its own; neither sees the other's", async () => {
    const [a, b] = await Promise.all([
      mcpSession("/mcp/sandbox/new"),
      mcpSession("/mcp", { "Toolwire-Sandbox": "new" }),
    ]);
    await Promise.all([a.bash("echo session-a > note.txt"), b.bash("echo session-b > note.txt")]);
    expect((await a.bash("cat note.txt")).text).toContain("session-a");
    expect((await b.bash("cat note.txt")).text).toContain("session-b");
    const pwdA = (await a.bash("ls -A")).text;
    expect(pwdA).toContain("note.txt");
    expect((await a.bash("cat note.txt")).text).not.toContain("session-b");
    // The default workspace never got either file.
    const plain = await mcpSession("/mcp");
    expect((await plain.bash("cat note.txt")).isError).toBe(true);
    for (const s of [a, b, plain]) await s.client.close();
  }, 90_000);

  it("deleting the session removes its sandbox: it reads deleted", async () => {
    const s = await mcpSession("/mcp/sandbox/new");
    await s.bash("echo x > x.txt");
    const list = (await (await call("/v1/sandboxes")).json()) as { sandboxes: SandboxView[] };
    const sessionId = s.transport.sessionId as string;
    expect(sessionId).toMatch(/^ms1\./);
    const owned = await env.MCP_SESSIONS.getByName(sessionId).sandbox();
    expect(list.sandboxes.map((v) => v.id)).toContain(owned);
    await s.transport.terminateSession();
    expect((await sandboxView(owned as string)).status).toBe("deleted");
    await s.client.close();
  }, 60_000);

  it("a session whose sandbox ended is over: its next request is 404 Session not found, saying why", async () => {
    const s = await mcpSession("/mcp/sandbox/new");
    await s.bash("true");
    const sessionId = s.transport.sessionId as string;
    const owned = (await env.MCP_SESSIONS.getByName(sessionId).sandbox()) as string;
    await call(`/v1/sandboxes/${owned}`, { method: "DELETE" });
    const res = await exports.default.fetch(
      new Request("http://127.0.0.1/mcp/sandbox/new", {
        method: "POST",
        headers: {
          Host: "127.0.0.1",
          Authorization: "Bearer test-api-token",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
      }),
    );
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`Session not found: its sandbox ${owned} is deleted`);
    await s.client.close();
  }, 60_000);

  it("a 2026-07-28 client (no session) is refused with what to use instead", async () => {
    const client = new Client(
      { name: "toolwire-stateless", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const answers: string[] = [];
    const transport = new StreamableHTTPClientTransport(
      new URL("http://127.0.0.1/mcp/sandbox/new"),
      {
        fetch: async (input, init) => {
          const req = new Request(input, init);
          req.headers.set("Host", "127.0.0.1");
          req.headers.set("Authorization", "Bearer test-api-token");
          const res = await exports.default.fetch(req);
          answers.push(`${res.status} ${await res.clone().text()}`);
          return res;
        },
      },
    );
    await expect(client.connect(transport)).rejects.toThrow();
    expect(answers[0]).toMatch(/^400 /);
    expect(answers[0]).toContain(
      "create a sandbox (POST /v1/sandboxes) and use /mcp/sandboxes/<id>",
    );
  });
});
