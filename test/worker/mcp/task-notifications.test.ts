import { describe, expect, it } from "vitest";
import {
  listenTaskIds,
  MAX_LISTEN_TASK_IDS,
  taskListenOf,
} from "../../../src/mcp/task-notifications.ts";
import { MISSING_CAPABILITY, TASKS_EXTENSION } from "../../../src/mcp/tasks.ts";

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
