// /mcp end to end: both official MCP client SDKs against the real Worker (wrangler dev),
// its invocation DOs and a real sandbox host with real processes (global-setup.ts).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer, VIEWER_PAGE } from "../../scripts/build-client.ts";
import { launchChromium } from "../support/e2e/chromium.ts";
import {
  connectTasksClient,
  connectV1,
  connectV2,
  type McpTestClient,
  type Progress,
  type ToolResult,
} from "../support/e2e/mcp/clients.ts";

const mcpUrl = `${inject("apiUrl")}/mcp`;
const token = inject("apiToken");
const auth = { Authorization: `Bearer ${token}` };

function text(result: ToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

function invocationOf(result: ToolResult): { id: string; viewUrl: string } {
  return result._meta?.["io.toolwire/invocation"] as { id: string; viewUrl: string };
}

/** Whether a process whose command line contains `marker` is running on this machine. */
function running(marker: string): boolean {
  try {
    execFileSync("pgrep", ["-f", marker]);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function invocation(id: string) {
  const res = await fetch(`${inject("apiUrl")}/v1/invocations/${id}`, { headers: auth });
  return (await res.json()) as {
    status: string;
    cancelled?: boolean;
    state: { content: Array<{ type: string; text?: string }> };
  };
}

const unique = () => `${Date.now()}${Math.floor(Math.random() * 1e6)}`;

describe.each([
  ["sdk 1.x, 2025-11-25", connectV1, "2025-11-25"],
  ["client 2.x, 2026-07-28", connectV2, "2026-07-28"],
] as const)("/mcp with %s", (_label, connect, version) => {
  let client: McpTestClient;

  beforeAll(async () => {
    client = await connect(mcpUrl, token);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("negotiates the expected protocol version", () => {
    expect(client.protocolVersion).toBe(version);
  });

  it("lists the tools with their output bounds and hints", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual([
      "bash",
      "read",
      "grep",
      "glob",
      "find",
      "ls",
      "write",
      "edit",
      "web_fetch",
      "jobs",
      "job_output",
      "kill",
      "write_stdin",
      "expose_port",
    ]);
    expect(byName.get("bash")?.description).toContain(
      "Output bound: the last 2,000 lines or 50 KB unless head, tail or maxBytes choose another window; the complete output is saved to a read-only file that read and grep open when given its path",
    );
    expect(byName.get("bash")?.annotations).toMatchObject({
      destructiveHint: true,
      readOnlyHint: false,
    });
    for (const name of ["read", "grep", "glob", "find", "ls", "web_fetch", "jobs", "job_output"]) {
      expect(byName.get(name)?.annotations?.readOnlyHint).toBe(true);
    }
    expect(byName.get("web_fetch")?.annotations?.openWorldHint).toBe(true);
    expect(byName.get("expose_port")?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    });
    for (const name of ["write", "edit"]) {
      expect(byName.get(name)?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      });
    }
    expect(byName.get("bash")?.inputSchema).toMatchObject({
      type: "object",
      required: ["command"],
      additionalProperties: false,
    });
  });

  it("seq 1 100000: the last 2,000 lines plus the footer, exact totals in structuredContent", async () => {
    const result = await client.call("bash", { command: "seq 1 100000" });
    expect(result.isError).toBe(false);
    const structured = result.structuredContent as {
      truncation: {
        totalLines: number;
        totalBytes: number;
        outputLines: number;
        spillPath: string;
      };
      exit: unknown;
    };
    expect(structured.truncation).toMatchObject({
      truncated: true,
      truncatedBy: "lines",
      totalLines: 100_000,
      totalBytes: 588_895,
      outputLines: 2000,
    });
    expect(structured.exit).toEqual({ status: "completed", exitCode: 0 });
    const kept = `${Array.from({ length: 2000 }, (_, i) => 98_001 + i).join("\n")}\n`;
    expect(text(result)).toBe(
      `${kept}\n[Showing lines 98,001–100,000 of 100,000. Full output: ${structured.truncation.spillPath}]` +
        `\n[To see lines 1–98,000: read {"path":"${structured.truncation.spillPath}","offset":1,"limit":2000}, then continue from the offset its footer gives; to search it, grep {"path":"${structured.truncation.spillPath}"}]`,
    );
    // One text block, then the link a person follows to the live view.
    expect(result.content.map((c) => c.type)).toEqual(["text", "resource_link"]);
    const { id, viewUrl } = invocationOf(result);
    expect(result.content[1]?.uri).toBe(viewUrl);
    expect(viewUrl).toContain(`/view/${id}?token=`);
  });

  it("a four-second command with a progressToken gets increasing progress notifications", async () => {
    const progress: Progress[] = [];
    const result = await client.call(
      "bash",
      { command: "for i in 1 2 3 4; do echo tick $i; sleep 1; done" },
      { onprogress: (p) => progress.push(p) },
    );
    expect(text(result)).toBe("tick 1\ntick 2\ntick 3\ntick 4\n");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    }
    expect(progress.at(-1)?.message).toMatch(/^tick \d$/);
  });

  it("exit 3 is isError with its output and exit code kept", async () => {
    const result = await client.call("bash", { command: "echo partial; exit 3" });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^partial\n[\s\S]*Command exited with code 3/);
    expect(result.structuredContent?.exit).toEqual({ status: "failed", exitCode: 3 });
  });

  it("bad arguments name the argument and what was expected", async () => {
    const result = await client.call("bash", { command: 42 });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("args.command: Invalid input: expected string, received number");
    const extra = await client.call("bash", { command: "true", shell: "zsh" });
    expect(text(extra)).toMatch(/args: Unrecognized key: "shell"/);
  });

  it("an unknown tool is a protocol error naming it", async () => {
    await expect(client.call("no_such_tool", {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Tool no_such_tool not found"),
    });
  });

  it("aborting a call stops the command and keeps its partial output", async () => {
    const marker = `sleep 70.${unique()}`;
    const id = `mcp-e2e-abort-${unique()}`;
    const abort = new AbortController();
    const call = client.call(
      "bash",
      { command: `echo started; ${marker}` },
      { meta: { "io.toolwire/callId": id }, signal: abort.signal, onprogress: () => {} },
    );
    call.catch(() => {});
    await until(() => running(marker), "the command to start");
    await until(
      async () => text({ content: (await invocation(id)).state.content }).includes("started"),
      "its first line",
    );
    abort.abort();
    await expect(call).rejects.toThrow(/abort/i);
    await until(
      async () => (await invocation(id)).status === "settled",
      "the invocation to settle",
    );
    const settled = await invocation(id);
    expect(settled.cancelled).toBe(true);
    expect(settled.state.content[0]?.text).toMatch(/^started\n[\s\S]*\[Cancelled:/);
    await until(() => !running(marker), "the process to be gone");
  });

  it("a retried call with the same _meta id joins the same invocation", async () => {
    const id = `mcp-e2e-retry-${unique()}`;
    const args = { command: "date +%s%N" };
    const first = await client.call("bash", args, { meta: { "io.toolwire/callId": id } });
    const again = await client.call("bash", args, { meta: { "io.toolwire/callId": id } });
    expect(invocationOf(again).id).toBe(id);
    expect(text(again)).toBe(text(first));
    const other = await client.call(
      "bash",
      { command: "true" },
      { meta: { "io.toolwire/callId": id } },
    );
    expect(other.isError).toBe(true);
    expect(text(other)).toContain(
      `toolCallId "${id}" already names an invocation of bash with other args`,
    );
  });

  it("the viewer link in the result opens the live page", async () => {
    if (!existsSync(VIEWER_PAGE)) await buildViewer();
    const result = await client.call("bash", { command: "echo viewer-check" });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const response = await page.goto(invocationOf(result).viewUrl);
      expect(response?.status()).toBe(200);
      await page.waitForFunction(
        () => document.getElementById("output")?.textContent?.includes("viewer-check") ?? false,
        undefined,
        { timeout: 30_000 },
      );
    } finally {
      await browser.close();
    }
  });
});

describe("/mcp over HTTP", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  };
  const headers = {
    ...auth,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
  };

  it("no token gets a 401 with WWW-Authenticate", async () => {
    const res = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe('Bearer realm="toolwire"');
    await expect(connectV2(mcpUrl, "wrong-token")).rejects.toThrow();
  });

  it("a foreign Host or Origin is refused (DNS rebinding)", async () => {
    const origin = await fetch(mcpUrl, {
      method: "POST",
      headers: { ...headers, Origin: "https://evil.example" },
      body: JSON.stringify(initialize),
    });
    expect(origin.status).toBe(403);
    const local = await fetch(mcpUrl, {
      method: "POST",
      headers,
      body: JSON.stringify(initialize),
    });
    expect(local.status).toBe(200);
    expect(local.headers.get("X-Accel-Buffering")).toBe("no");
    expect(local.headers.get("Mcp-Session-Id")).toMatch(/^ms1\./);
  });

  it("2025-11-25: a closed stream does not cancel, and the same request resumes the call", async () => {
    const init = await fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(initialize) });
    const session = init.headers.get("Mcp-Session-Id")!;
    await init.body?.cancel();
    const sessionHeaders = {
      ...headers,
      "Mcp-Session-Id": session,
      "MCP-Protocol-Version": "2025-11-25",
    };
    const marker = `sleep 3.${unique()}`;
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "bash", arguments: { command: `echo begun; ${marker}; echo finished` } },
    };
    const abort = new AbortController();
    const first = await fetch(mcpUrl, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify(call),
      signal: abort.signal,
    });
    expect(first.headers.get("Content-Type")).toContain("text/event-stream");
    await until(() => running(marker), "the command to start");
    abort.abort();
    // The same request on the same session joins the running invocation and answers its end.
    const again = await fetch(mcpUrl, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify(call),
    });
    const body = await again.text();
    expect(body).toContain("begun\\nfinished\\n");
    expect(body).not.toContain("Cancelled");
  });

  it("2025-11-25: a stream closed mid-call resumes with Last-Event-ID and gets the result", async () => {
    const init = await fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(initialize) });
    const session = init.headers.get("Mcp-Session-Id")!;
    await init.body?.cancel();
    const sessionHeaders = {
      ...headers,
      "Mcp-Session-Id": session,
      "MCP-Protocol-Version": "2025-11-25",
    };
    const marker = `sleep 2.${unique()}`;
    const call = {
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "bash", arguments: { command: `echo begun; ${marker}; echo finished` } },
    };
    const first = await fetch(mcpUrl, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify(call),
    });
    // The stream opens with a priming event: an id, a retry hint, empty data.
    const reader = first.body!.pipeThrough(new TextDecoderStream()).getReader();
    let opening = "";
    while (!/\n\n/.test(opening)) opening += (await reader.read()).value ?? "";
    const priming = /^id: (\S+)\nretry: (\d+)\ndata: \n\n/.exec(opening);
    expect(priming).not.toBeNull();
    expect(Number(priming![2])).toBe(1000);
    await until(() => running(marker), "the command to start");
    await reader.cancel();
    // A reconnect with the last event id gets the call's response once it has ended.
    const resumed = await fetch(mcpUrl, {
      method: "GET",
      headers: { ...sessionHeaders, Accept: "text/event-stream", "Last-Event-ID": priming![1]! },
    });
    expect(resumed.status).toBe(200);
    const body = await resumed.text();
    expect(body).toContain('"id":8');
    expect(body).toContain("begun\\nfinished\\n");
    expect(body).not.toContain("Cancelled");
    // An event id this server did not issue is refused.
    const forged = await fetch(mcpUrl, {
      method: "GET",
      headers: { ...sessionHeaders, Accept: "text/event-stream", "Last-Event-ID": "../x" },
    });
    expect(forged.status).toBe(400);
    await forged.body?.cancel();
  });

  it("a long tool call streams with keep-alive comments and X-Accel-Buffering: no", async () => {
    const init = await fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(initialize) });
    const session = init.headers.get("Mcp-Session-Id")!;
    await init.body?.cancel();
    const res = await fetch(mcpUrl, {
      method: "POST",
      headers: { ...headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "bash", arguments: { command: "sleep 2.5; echo awake" } },
      }),
    });
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    expect(res.headers.get("X-Accel-Buffering")).toBe("no");
    const body = await res.text();
    // MCP_KEEPALIVE_SECONDS is 1 in the e2e Worker: a 2.5 s call sees at least two.
    expect(body.match(/^: keepalive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(body).toContain("awake\\n");
  });

  it("a call outlives its client: a new client with the same _meta id gets the same result", async () => {
    const id = `mcp-e2e-durable-${unique()}`;
    const marker = `sleep 2.${unique()}`;
    const args = { command: `echo first; ${marker}; echo second` };
    const leaving = await connectV1(mcpUrl, token);
    const abandoned = leaving.call("bash", args, { meta: { "io.toolwire/callId": id } });
    abandoned.catch(() => {});
    await until(() => running(marker), "the command to start");
    await leaving.close();
    const returning = await connectV2(mcpUrl, token);
    try {
      const result = await returning.call("bash", args, { meta: { "io.toolwire/callId": id } });
      expect(text(result)).toBe("first\nsecond\n");
      expect(result.structuredContent?.exit).toEqual({ status: "completed", exitCode: 0 });
    } finally {
      await returning.close();
    }
  });

  it("2025-11-25: a terminated session is a 404", async () => {
    const init = await fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(initialize) });
    const session = init.headers.get("Mcp-Session-Id")!;
    await init.body?.cancel();
    const withSession = { ...headers, "Mcp-Session-Id": session };
    expect((await fetch(mcpUrl, { method: "DELETE", headers: withSession })).status).toBe(200);
    const after = await fetch(mcpUrl, {
      method: "POST",
      headers: withSession,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(after.status).toBe(404);
    const forged = await fetch(mcpUrl, {
      method: "POST",
      headers: { ...headers, "Mcp-Session-Id": `${session.slice(0, -2)}xx` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(forged.status).toBe(404);
  });

  it("2025-11-25: a request without Mcp-Session-Id after initialize is a 400, as the spec names", async () => {
    const init = await fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(initialize) });
    expect(init.status).toBe(200);
    expect(init.headers.get("Mcp-Session-Id")).toMatch(/^ms1\./);
    await init.body?.cancel();
    for (const method of ["tools/list", "tools/call"]) {
      const bare = await fetch(mcpUrl, {
        method: "POST",
        headers: { ...headers, "MCP-Protocol-Version": "2025-11-25" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method,
          params: { name: "bash", arguments: { command: "true" } },
        }),
      });
      expect(bare.status).toBe(400);
      expect(await bare.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message: expect.stringContaining("Mcp-Session-Id header is required"),
        },
      });
    }
  });
});

describe("/mcp tasks (io.modelcontextprotocol/tasks, 2026-07-28)", () => {
  async function settledTask(client: Awaited<ReturnType<typeof connectTasksClient>>, id: string) {
    for (let i = 0; i < 300; i++) {
      const task = await client.getTask(id);
      if (task.status !== "working") return task;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`task ${id} did not settle`);
  }

  it("a task survives its client closing the connection and is fetched by a new client", async () => {
    const marker = `sleep 2.${unique()}`;
    const taskId = `mcp-e2e-task-${unique()}`;
    const leaving = await connectTasksClient(mcpUrl, token);
    const command = `echo first; ${marker}; echo second`;
    expect(await leaving.startTask("bash", { command }, taskId)).toBe("task");
    // Durable before the answer: the task is there at once, working.
    const working = await leaving.getTask(taskId);
    expect(working).toMatchObject({ taskId, status: "working" });
    expect(Number.isInteger(working.ttlMs)).toBe(true);
    expect(working).not.toHaveProperty("result");
    await until(() => running(marker), "the command to start");
    await leaving.close();

    const returning = await connectTasksClient(mcpUrl, token);
    try {
      const task = await settledTask(returning, taskId);
      expect(task.status).toBe("completed");
      expect(task.result && text(task.result)).toBe("first\nsecond\n");
      expect(task.result?.structuredContent?.exit).toEqual({ status: "completed", exitCode: 0 });
      // The task id is the invocation id: the HTTP API reads the same call.
      expect((await invocation(taskId)).status).toBe("settled");
      // Fetched again, the task gives the same result (the DO stores it; only the
      // viewer link's token is minted fresh).
      const again = (await returning.getTask(taskId)).result;
      expect(again?.content[0]).toEqual(task.result?.content[0]);
      expect(again?.structuredContent).toEqual(task.result?.structuredContent);
    } finally {
      await returning.close();
    }
  });

  it("tasks/cancel stops the process and keeps the partial output", async () => {
    const marker = `sleep 70.${unique()}`;
    const client = await connectTasksClient(mcpUrl, token);
    try {
      const taskId = `mcp-e2e-task-cancel-${unique()}`;
      const command = `echo started; ${marker}`;
      expect(await client.startTask("bash", { command }, taskId)).toBe("task");
      await until(() => running(marker), "the command to start");
      await until(
        async () => text({ content: (await invocation(taskId)).state.content }).includes("started"),
        "its first line",
      );
      // An empty ack (the SDK client strips the wire's resultType: "complete").
      const ack = await client.cancelTask(taskId);
      expect(ack).not.toHaveProperty("status");
      expect(ack).not.toHaveProperty("taskId");
      const task = await settledTask(client, taskId);
      expect(task.status).toBe("cancelled");
      expect(task.result && text(task.result)).toMatch(/^started\n[\s\S]*\[Cancelled:/);
      expect(task.result?.structuredContent?.exit).toMatchObject({ status: "cancelled" });
      await until(() => !running(marker), "the process to be gone");
      // Cancelling a settled task is the same empty ack.
      expect(await client.cancelTask(taskId)).not.toHaveProperty("status");
    } finally {
      await client.close();
    }
  });

  it("an unknown task id is -32602 naming it", async () => {
    const client = await connectTasksClient(mcpUrl, token);
    try {
      await expect(client.getTask(`no-such-task-${unique()}`)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("taskId: no task"),
      });
    } finally {
      await client.close();
    }
  });
});

describe("/mcp task status notifications (notifications/tasks on subscriptions/listen)", () => {
  it("a listening client gets working, then completed with the result, then a graceful close", async () => {
    const client = await connectTasksClient(mcpUrl, token);
    try {
      const taskId = `mcp-e2e-notify-${unique()}`;
      expect(await client.startTask("bash", { command: "sleep 2; echo done" }, taskId)).toBe(
        "task",
      );
      const stream = await client.listenTasks([taskId]);
      // The stream ends by itself once every task it watches is terminal.
      expect(await stream.closed).toBe("graceful");
      expect(stream.notes.map((note) => note.status)).toEqual(["working", "completed"]);
      const [working, completed] = stream.notes;
      expect(working).toMatchObject({ taskId, pollIntervalMs: 1000 });
      expect(working).not.toHaveProperty("result");
      expect(completed?.result && text(completed.result)).toBe("done\n");
      expect(completed?.result?.structuredContent?.exit).toEqual({
        status: "completed",
        exitCode: 0,
      });
      // The same task tasks/get reports.
      const got = await client.getTask(taskId);
      expect(got.status).toBe("completed");
      expect(got.result?.structuredContent).toEqual(completed?.result?.structuredContent);
    } finally {
      await client.close();
    }
  });

  it("tasks/cancel is notified as cancelled, with the partial output kept", async () => {
    const marker = `sleep 71.${unique()}`;
    const client = await connectTasksClient(mcpUrl, token);
    try {
      const taskId = `mcp-e2e-notify-cancel-${unique()}`;
      expect(await client.startTask("bash", { command: `echo started; ${marker}` }, taskId)).toBe(
        "task",
      );
      const stream = await client.listenTasks([taskId]);
      await until(() => stream.notes.length === 1, "the working notification");
      expect(stream.notes[0]?.status).toBe("working");
      await until(() => running(marker), "the command to start");
      await until(
        async () => text({ content: (await invocation(taskId)).state.content }).includes("started"),
        "its first line",
      );
      await client.cancelTask(taskId);
      expect(await stream.closed).toBe("graceful");
      expect(stream.notes.map((note) => note.status)).toEqual(["working", "cancelled"]);
      const cancelled = stream.notes[1];
      expect(cancelled?.result && text(cancelled.result)).toMatch(/^started\n[\s\S]*\[Cancelled:/);
      await until(() => !running(marker), "the process to be gone");
    } finally {
      await client.close();
    }
  });

  it("a client that closes its stream ends it; the task runs on", async () => {
    const marker = `sleep 3.${unique()}`;
    const client = await connectTasksClient(mcpUrl, token);
    try {
      const taskId = `mcp-e2e-notify-leave-${unique()}`;
      expect(await client.startTask("bash", { command: `${marker}; echo after` }, taskId)).toBe(
        "task",
      );
      const stream = await client.listenTasks([taskId]);
      await until(() => stream.notes.length === 1, "the working notification");
      await stream.close();
      expect(await stream.closed).toBe("local");
      for (let i = 0; i < 300 && (await client.getTask(taskId)).status === "working"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const task = await client.getTask(taskId);
      expect(task.status).toBe("completed");
      expect(task.result && text(task.result)).toBe("after\n");
      // The closed stream got nothing more.
      expect(stream.notes.map((note) => note.status)).toEqual(["working"]);
    } finally {
      await client.close();
    }
  });

  it("on the wire: the ack first, every message tagged, keep-alive comments, the close last", async () => {
    const client = await connectTasksClient(mcpUrl, token);
    try {
      const taskId = `mcp-e2e-notify-wire-${unique()}`;
      expect(await client.startTask("bash", { command: "sleep 2.5; echo awake" }, taskId)).toBe(
        "task",
      );
      const res = await fetch(mcpUrl, {
        method: "POST",
        headers: {
          ...auth,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2026-07-28",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "wire-1",
          method: "subscriptions/listen",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "e2e", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {
                extensions: { "io.modelcontextprotocol/tasks": {} },
              },
            },
            notifications: { taskIds: [taskId, `no-such-task-${unique()}`] },
          },
        }),
      });
      expect(res.headers.get("Content-Type")).toContain("text/event-stream");
      expect(res.headers.get("X-Accel-Buffering")).toBe("no");
      const body = await res.text();
      // MCP_KEEPALIVE_SECONDS is 1 in the e2e Worker: a 2.5 s task sees at least two.
      expect(body.match(/^: keepalive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
      const messages = body
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)));
      const subscriptionId = "io.modelcontextprotocol/subscriptionId";
      expect(messages.map((m) => m.method ?? "result")).toEqual([
        "notifications/subscriptions/acknowledged",
        "notifications/tasks",
        "notifications/tasks",
        "result",
      ]);
      // The unknown id is not honored.
      expect(messages[0].params.notifications).toEqual({ taskIds: [taskId] });
      for (const note of messages.slice(0, 3)) {
        expect(note.params._meta[subscriptionId]).toBe("wire-1");
      }
      expect(messages[1].params).toMatchObject({ taskId, status: "working" });
      expect(messages[2].params).toMatchObject({ taskId, status: "completed" });
      expect(text(messages[2].params.result)).toBe("awake\n");
      expect(messages[3]).toMatchObject({
        id: "wire-1",
        result: { resultType: "complete", _meta: { [subscriptionId]: "wire-1" } },
      });
    } finally {
      await client.close();
    }
  });

  it("an unknown task id is left out of the ack and the stream closes at once", async () => {
    const client = await connectTasksClient(mcpUrl, token);
    try {
      const stream = await client.listenTasks([`no-such-task-${unique()}`]);
      expect(await stream.closed).toBe("graceful");
      expect(stream.notes).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a listen for task ids without the extension is -32021; 65 task ids is -32602", async () => {
    const post = (params: Record<string, unknown>) =>
      fetch(mcpUrl, {
        method: "POST",
        headers: {
          ...auth,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2026-07-28",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "subscriptions/listen", params }),
      });
    const meta = (extensions: Record<string, unknown>) => ({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "e2e", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": { extensions },
    });
    const without = await post({ _meta: meta({}), notifications: { taskIds: ["a"] } });
    expect(without.status).toBe(400);
    expect(await without.json()).toMatchObject({ id: 7, error: { code: -32021 } });
    const tooMany = Array.from({ length: 65 }, (_, i) => `t${i}`);
    const over = await post({
      _meta: meta({ "io.modelcontextprotocol/tasks": {} }),
      notifications: { taskIds: tooMany },
    });
    expect(over.status).toBe(400);
    expect(await over.json()).toMatchObject({
      id: 7,
      error: { code: -32602, message: expect.stringContaining("at most 64 task ids") },
    });
  });
});
