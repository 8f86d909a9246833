// Issue 26 end to end: bash with tty and write_stdin through HTTP and MCP (an official SDK
// client) against the real Worker (wrangler dev), its DOs and a real sandbox host whose
// jail runs the programs. docs/steering.md#interactive-commands-tty-write_stdin describes what is tested.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectV2, type McpTestClient, type ToolResult } from "../support/e2e/mcp/clients.ts";

const api = inject("apiUrl");
const token = inject("apiToken");
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const unique = () => `${Date.now()}${Math.floor(Math.random() * 1e6)}`;

async function http(method: string, url: string, body?: unknown) {
  const res = await fetch(`${api}${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Runs a tool over HTTP and answers its settled result. */
async function run(tool: string, args: unknown) {
  const created = await http("POST", "/v1/invocations", { tool, args });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const polled = await http("GET", `/v1/invocations/${id}/result?wait=30`);
  expect(polled.status).toBe(200);
  return polled.body as {
    content: { text: string }[];
    details: Record<string, unknown>;
    isError: boolean;
  };
}

function text(result: ToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

let client: McpTestClient;
beforeAll(async () => {
  client = await connectV2(`${api}/mcp`, token);
});
afterAll(async () => {
  await client?.close();
});

describe("a terminal over HTTP", () => {
  it("read -p: the first moment names the prompt; write_stdin answers it; the call ends with exit 0", async () => {
    const created = await http("POST", "/v1/invocations", {
      tool: "bash",
      args: { command: `read -p 'Name? ' n; echo "hello $n"`, tty: true },
    });
    expect(created.status).toBe(201);
    const first = created.body.firstMoment as {
      text: string;
      awaitingInput: boolean;
      prompt: string;
    };
    expect(first.awaitingInput).toBe(true);
    expect(first.prompt).toBe("Name?");
    expect(first.text).toContain('[waiting for input: "Name?"');
    const id = created.body.id as string;
    const answer = await run("write_stdin", { id, text: "Ada\n" });
    const said = answer.content[0]!.text;
    expect(said).toContain("hello Ada\n");
    expect(said).not.toContain("\r");
    expect(said).toContain("exited with code 0");
    const settled = await http("GET", `/v1/invocations/${id}/result?wait=10`);
    expect((settled.body.details as { exitCode: number }).exitCode).toBe(0);
  });

  it("write_stdin takes 64 KiB of text and refuses a byte more, and a call with nothing to send", async () => {
    const at = await http("POST", "/v1/invocations", {
      tool: "write_stdin",
      args: { id: `call_missing${unique()}`, text: "a".repeat(64 * 1024) },
    });
    expect(at.status).toBe(201);
    const over = await http("POST", "/v1/invocations", {
      tool: "write_stdin",
      args: { id: "call_missing", text: "a".repeat(64 * 1024 + 1) },
    });
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toContain("at most 65,536 bytes");
    const empty = await http("POST", "/v1/invocations", {
      tool: "write_stdin",
      args: { id: "call_missing" },
    });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body)).toContain("give text, keys or eof: true");
  });

  it("refuses a size out of bounds, and cols without tty", async () => {
    const wide = await http("POST", "/v1/invocations", {
      tool: "bash",
      args: { command: "true", tty: true, cols: 401 },
    });
    expect(wide.status).toBe(400);
    const loose = await http("POST", "/v1/invocations", {
      tool: "bash",
      args: { command: "true", rows: 30 },
    });
    expect(loose.status).toBe(400);
    expect(JSON.stringify(loose.body)).toContain("give them with tty: true");
  });
});

describe("a terminal over MCP", () => {
  it("python3 -q: 1+1 gives 2, and the answer says it waits at >>>", async () => {
    const started = await client.call("bash", { command: "python3 -q", tty: true });
    const id = (started.structuredContent as { invocationId: string }).invocationId;
    expect(text(started)).toContain('[waiting for input: ">>>"');
    const sum = await client.call(
      "write_stdin",
      { id, text: "1+1\n" },
      { meta: { "io.toolwire/callId": `w-${unique()}` } },
    );
    expect(text(sum)).toMatch(/>>> 1\+1\n2\n/);
    expect(text(sum)).toContain('[waiting for input: ">>>"');
    const end = await client.call("write_stdin", { id, keys: ["C-d"] });
    expect(text(end)).toMatch(/exited with code 0/);
  });

  it("less: the screen, not its repaints; G shows the last page; q ends it", async () => {
    const started = await client.call("bash", {
      command: "seq 1 1000 > thousand.txt && less thousand.txt",
      tty: true,
      cols: 40,
      rows: 10,
    });
    const id = (started.structuredContent as { invocationId: string }).invocationId;
    expect(text(started)).toMatch(/^1\n2\n3\n4\n5\n6\n7\n8\n9\n/);
    expect(text(started)).toContain("[screen 40×10");
    const last = await client.call("write_stdin", { id, text: "G" });
    expect(text(last)).toMatch(/^992\n993\n994\n995\n996\n997\n998\n999\n1000\n/);
    expect(text(last)).not.toContain("\u001b");
    const screen = (last.structuredContent as { details?: { screen: { alternate: boolean } } })
      .details;
    expect(last.isError).toBe(false);
    expect(screen === undefined || screen.screen.alternate).toBe(true);
    const quit = await client.call("write_stdin", { id, text: "q" });
    expect(text(quit)).toContain("exited with code 0");
  });

  it("a background cat is fed by write_stdin and ended by eof; it waits while it reads", async () => {
    const started = await client.call("bash", { command: "cat", background: true });
    const id = (started.structuredContent as { invocationId: string }).invocationId;
    const fed = await client.call("write_stdin", { id, text: "one\ntwo\n" });
    expect(text(fed)).toContain("one\ntwo\n");
    expect(text(fed)).toContain("[waiting for input");
    const ended = await client.call("write_stdin", { id, eof: true });
    expect(text(ended)).toContain("exited with code 0");
  });

  it("a command that computes is not waiting; job_output says so", async () => {
    const started = await client.call("bash", { command: "sleep 3; read x", tty: true });
    const id = (started.structuredContent as { invocationId: string }).invocationId;
    expect(text(started)).toContain("[not waiting for input: the command is working]");
    const later = await client.call("job_output", { id, wait: 0 });
    expect(text(later)).toContain("[not waiting for input");
    await client.call("kill", { id });
  });
});
