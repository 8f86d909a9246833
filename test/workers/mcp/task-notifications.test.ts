import { describe, expect, it } from "vitest";
import type { InvocationPort } from "../../../src/mcp/port.ts";
import {
  listenTaskIds,
  MAX_LISTEN_TASK_IDS,
  serveTaskListen,
  taskListenOf,
} from "../../../src/mcp/task-notifications.ts";
import { MISSING_CAPABILITY, TASKS_EXTENSION } from "../../../src/mcp/tasks.ts";
import type { InvocationView, Outcome, ResultPoll } from "../../../src/protocol/index.ts";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `task-${i}`);

function listenRequest(params: Record<string, unknown>, version = "2026-07-28") {
  const body = { jsonrpc: "2.0", id: "listen:0", method: "subscriptions/listen", params };
  const req = new Request("http://localhost/mcp", {
    method: "POST",
    headers: { "Content-Type": "application/json", "MCP-Protocol-Version": version },
    body: JSON.stringify(body),
  });
  return taskListenOf(req, body);
}

function meta(extensions: Record<string, unknown>) {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { extensions },
  };
}

describe("listenTaskIds", () => {
  it(`takes up to ${MAX_LISTEN_TASK_IDS} task ids and refuses one more, naming the bound`, () => {
    expect(listenTaskIds(ids(MAX_LISTEN_TASK_IDS - 1))).toMatchObject({ ok: true });
    expect(listenTaskIds(ids(MAX_LISTEN_TASK_IDS))).toEqual({
      ok: true,
      taskIds: ids(MAX_LISTEN_TASK_IDS),
    });
    expect(listenTaskIds(ids(MAX_LISTEN_TASK_IDS + 1))).toEqual({
      ok: false,
      message: `notifications.taskIds: at most 64 task ids per stream, got 65; open another stream`,
    });
  });

  it("watches a repeated id once", () => {
    expect(listenTaskIds(["a", "b", "a"])).toEqual({ ok: true, taskIds: ["a", "b"] });
  });

  it("refuses an empty list, a non-list and a non-string or empty id, naming where", () => {
    expect(listenTaskIds([])).toMatchObject({
      ok: false,
      message: expect.stringContaining("non-empty array"),
    });
    expect(listenTaskIds("a")).toMatchObject({ ok: false });
    expect(listenTaskIds(["a", 3])).toEqual({
      ok: false,
      message: "notifications.taskIds[1]: expected a non-empty string",
    });
    expect(listenTaskIds(["a", ""])).toMatchObject({
      ok: false,
      message: expect.stringContaining("[1]"),
    });
  });
});

describe("taskListenOf", () => {
  it("is a task listen only for a 2026-07-28 subscriptions/listen naming taskIds", () => {
    const declared = meta({ [TASKS_EXTENSION]: {} });
    expect(listenRequest({ _meta: declared, notifications: { taskIds: ["a"] } })).toEqual({
      ok: true,
      id: "listen:0",
      taskIds: ["a"],
    });
    // A listen without taskIds stays the SDK's.
    expect(listenRequest({ _meta: declared, notifications: { toolsListChanged: true } })).toBe(
      undefined,
    );
    // So does a 2025-era request (no envelope claim) and any other method.
    expect(listenRequest({ notifications: { taskIds: ["a"] } }, "2025-11-25")).toBe(undefined);
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: declared } };
    const other = new Request("http://localhost/mcp", {
      method: "POST",
      body: JSON.stringify(body),
    });
    expect(taskListenOf(other, body)).toBe(undefined);
  });

  it("without the tasks extension declared is -32021 (HTTP 400)", () => {
    expect(listenRequest({ _meta: meta({}), notifications: { taskIds: ["a"] } })).toMatchObject({
      ok: false,
      status: 400,
      code: MISSING_CAPABILITY,
    });
  });

  it("with bad taskIds is -32602 (HTTP 400) with the field's message", () => {
    const declared = meta({ [TASKS_EXTENSION]: {} });
    expect(listenRequest({ _meta: declared, notifications: { taskIds: [1] } })).toEqual({
      ok: false,
      id: "listen:0",
      status: 400,
      code: -32602,
      message: "notifications.taskIds[0]: expected a non-empty string",
    });
  });
});

/**
 * An invocation that never settles, behind the port the stream reads: every `result`
 * wait comes back "running" after 5 ms (or answers `failing`), and is counted.
 */
function runningTask(failing?: Outcome<ResultPoll>) {
  const view: InvocationView = {
    id: "t1",
    tool: "bash",
    args: {},
    runId: "t1",
    turnId: "t1",
    sandbox: "default",
    status: "running",
    state: { content: [] } as unknown as InvocationView["state"],
    createdAt: Date.UTC(2026, 11, 1, 8, 0, 0),
  };
  const waits = { count: 0 };
  const refuse = () => Promise.reject(new Error("not used by a listen stream"));
  const port: InvocationPort = {
    start: refuse,
    cancel: refuse,
    links: refuse,
    commitRead: refuse,
    outputLines: refuse,
    inputState: refuse,
    view: async () => ({ ok: true, value: view }),
    progress: refuse,
    result: async () => {
      waits.count++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return failing ?? { ok: true, value: { status: "running" } };
    },
  };
  return { port, waits };
}

const serverInfo = { name: "toolwire", version: "test" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string) {
  const decoder = new TextDecoder();
  let seen = "";
  while (!seen.includes(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  return seen;
}

describe("serveTaskListen", () => {
  it("stops waiting on the DO and closes when the client goes", async () => {
    const { port, waits } = runningTask();
    const client = new AbortController();
    const res = await serveTaskListen(
      { ok: true, id: 1, taskIds: ["t1"] },
      { port, ttlMs: null, keepAliveMs: 10, serverInfo, signal: client.signal },
    );
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const opened = await readUntil(reader, '"status":"working"');
    expect(opened).toContain("notifications/subscriptions/acknowledged");
    await readUntil(reader, ": keepalive");
    await sleep(30);
    expect(waits.count).toBeGreaterThan(1);
    client.abort();
    const rest = await readUntil(reader, "never sent");
    // No graceful close: the client left; and at most the wait in flight ends after it.
    expect(rest).not.toContain('"result"');
    const after = waits.count;
    await sleep(50);
    expect(waits.count).toBeLessThanOrEqual(after + 1);
  });

  it("ends without the graceful close when a task's DO answers an error", async () => {
    const { port } = runningTask({
      ok: false,
      error: { code: "not_found", message: "no invocation t1", status: 404 },
    });
    const res = await serveTaskListen(
      { ok: true, id: 1, taskIds: ["t1"] },
      { port, ttlMs: null, keepAliveMs: 1000, serverInfo },
    );
    const body = await res.text();
    expect(body).toContain('"status":"working"');
    expect(body).not.toContain('"result"');
  });
});
