// A task read back after its invocation DO was evicted: the real 2.x SDK client (tasks
// extension declared) against the real /mcp handler, the real invocation DO and its
// storage, with the DO evicted between the two reads.

import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { handleMcpRequest } from "../../../src/mcp/index.ts";
import { getTool } from "../../../src/tools/index.ts";
import { mcpOptions } from "../../../src/worker/mcp-route.ts";
import { stubFor } from "../durable-objects/helpers.ts";

const URL_ = "http://127.0.0.1/mcp";
const anyResult = z.looseObject({});

interface Task {
  taskId: string;
  status: string;
  result?: { content: Array<{ text?: string }>; structuredContent?: unknown };
}

async function tasksClient() {
  const client = new Client(
    { name: "toolwire-tasks-eviction", version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    },
  );
  const emit = getTool("emit");
  if (!emit) throw new Error("the emit example tool is not registered");
  const transport = new StreamableHTTPClientTransport(new URL(URL_), {
    fetch: (input, init) => {
      const req = new Request(input, init);
      // A constructed Request has no Host header; the rebinding check wants one.
      req.headers.set("Host", "127.0.0.1");
      return handleMcpRequest(req, { ...mcpOptions(req, env, [emit]) });
    },
  });
  await client.connect(transport);
  const request = async (method: string, params: Record<string, unknown>) =>
    (await client.request({ method, params }, anyResult)) as unknown as Task;
  return { client, request };
}

async function settled(
  request: (m: string, p: Record<string, unknown>) => Promise<Task>,
  id: string,
) {
  for (let i = 0; i < 200; i++) {
    const task = await request("tasks/get", { taskId: id });
    if (task.status !== "working") return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${id} did not settle`);
}

describe("MCP tasks and eviction", () => {
  it("a settled task reads the same after its DO was evicted, from a new client", async () => {
    const id = "mcp-task-evicted";
    const first = await tasksClient();
    // Client 2.4.0 refuses resultType "task" on tools/call (no tasks runtime); the task
    // is named by its call id, so the refusal still tells which task was created.
    await expect(
      first.request("tools/call", {
        name: "emit",
        arguments: { lines: 3, intervalMs: 50 },
        _meta: { "io.toolwire/callId": id },
      }),
    ).rejects.toMatchObject({ data: { resultType: "task" } });
    const before = await settled(first.request, id);
    expect(before.status).toBe("completed");
    expect(before.result?.content[0]?.text).toBe("1 line\n2 line\n3 line\n");
    await first.client.close();

    await evictDurableObject(stubFor(id));

    const second = await tasksClient();
    const after = await second.request("tasks/get", { taskId: id });
    expect(after.status).toBe("completed");
    expect(after.result?.content[0]).toEqual(before.result?.content[0]);
    expect(after.result?.structuredContent).toEqual(before.result?.structuredContent);
    await second.client.close();
  });
});
