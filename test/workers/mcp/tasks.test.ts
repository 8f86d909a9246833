import { describe, expect, it } from "vitest";
import {
  negotiatedTasks,
  requestDeclaresTasks,
  TASKS_EXTENSION,
  taskFields,
  taskStatus,
} from "../../../src/mcp/tasks.ts";
import { type InvocationView, workerConfig } from "../../../src/protocol/index.ts";
import { taskTtlMs } from "../../../src/worker/mcp-route.ts";

const CAPS = "io.modelcontextprotocol/clientCapabilities";

function view(over: Partial<InvocationView>): InvocationView {
  return {
    id: "call_1",
    tool: "bash",
    args: {},
    runId: "call_1",
    turnId: "call_1",
    sandbox: "default",
    status: "running",
    state: { content: [] } as unknown as InvocationView["state"],
    createdAt: Date.UTC(2026, 11, 1, 8, 0, 0),
    ...over,
  };
}

describe("negotiatedTasks", () => {
  it("is true only when the client capabilities name the extension", () => {
    expect(negotiatedTasks({ [CAPS]: { extensions: { [TASKS_EXTENSION]: {} } } })).toBe(true);
    expect(negotiatedTasks(undefined)).toBe(false);
    expect(negotiatedTasks({ [CAPS]: {} })).toBe(false);
    expect(negotiatedTasks({ [CAPS]: { extensions: {} } })).toBe(false);
    expect(negotiatedTasks({ [CAPS]: { extensions: { [TASKS_EXTENSION]: null } } })).toBe(false);
    // The v1 slot is not the extension.
    expect(negotiatedTasks({ [CAPS]: { tasks: {} } })).toBe(false);
    expect(negotiatedTasks({ [CAPS]: "tasks" })).toBe(false);
  });

  it("reads the envelope the SDK lifts out of _meta", () => {
    const envelope = { [CAPS]: { extensions: { [TASKS_EXTENSION]: {} } } };
    expect(requestDeclaresTasks({ _meta: { progressToken: 1 }, envelope })).toBe(true);
    expect(requestDeclaresTasks({ _meta: { progressToken: 1 } })).toBe(false);
  });
});

describe("task status and fields", () => {
  it("maps running, settled and cancelled invocations; a tool error is completed", () => {
    expect(taskStatus(view({}))).toBe("working");
    expect(taskStatus(view({ status: "settled", isError: true }))).toBe("completed");
    expect(taskStatus(view({ status: "settled", cancelled: true }))).toBe("cancelled");
  });

  it("carries ISO times, integer ttlMs and pollIntervalMs, and no v1 keys", () => {
    const settledAt = Date.UTC(2026, 11, 1, 8, 0, 5);
    const fields = taskFields(view({ status: "settled", settledAt }), 604_800_000);
    expect(fields).toEqual({
      taskId: "call_1",
      status: "completed",
      createdAt: "2026-12-01T08:00:00.000Z",
      lastUpdatedAt: "2026-12-01T08:00:05.000Z",
      ttlMs: 604_800_000,
      pollIntervalMs: 1000,
    });
    expect(taskFields(view({}), null).lastUpdatedAt).toBe("2026-12-01T08:00:00.000Z");
  });
});

describe("taskTtlMs", () => {
  it("is the settled retention: 7 days by default, null at 0 days", () => {
    const ttl = (days?: string) =>
      taskTtlMs(workerConfig(days === undefined ? {} : { SETTLED_RETENTION_DAYS: days }));
    expect(ttl()).toBe(7 * 86_400_000);
    expect(ttl("1")).toBe(86_400_000);
    expect(ttl("0")).toBeNull();
    expect(ttl("-1")).toBe(7 * 86_400_000);
  });
});
