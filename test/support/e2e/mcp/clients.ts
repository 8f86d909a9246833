// Both official MCP client SDKs behind one small interface, so every e2e case runs
// against each: @modelcontextprotocol/sdk 1.x (2025-11-25, initialize and a session)
// and @modelcontextprotocol/client 2.x pinned to 2026-07-28 (stateless).
import {
  Client as ClientV2,
  type SubscriptionFilter,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";

export interface ToolResult {
  content: Array<{ type: string; text?: string; uri?: string; data?: string }>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface ToolList {
  tools: Array<{
    name: string;
    description?: string;
    inputSchema: Record<string, unknown>;
    annotations?: Record<string, unknown>;
  }>;
}

export interface Progress {
  progress: number;
  message?: string;
}

export interface CallOptions {
  meta?: Record<string, unknown>;
  onprogress?: (p: Progress) => void;
  signal?: AbortSignal;
}

export interface McpTestClient {
  readonly label: string;
  readonly protocolVersion: string | undefined;
  listTools(): Promise<ToolList>;
  call(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
  close(): Promise<void>;
}

const TIMEOUT = { timeout: 60_000 };

/** A 2025-11-25 client on `@modelcontextprotocol/sdk` 1.x. */
export async function connectV1(url: string, token: string): Promise<McpTestClient> {
  const client = new ClientV1({ name: "toolwire-e2e-v1", version: "1.0.0" });
  const transport = new TransportV1(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return {
    label: "sdk 1.x (2025-11-25)",
    protocolVersion: transport.protocolVersion,
    listTools: () => client.listTools() as Promise<ToolList>,
    call: (name, args, options = {}) =>
      client.callTool({ name, arguments: args, _meta: options.meta }, undefined, {
        ...TIMEOUT,
        signal: options.signal,
        onprogress: options.onprogress,
      }) as Promise<ToolResult>,
    close: () => client.close(),
  };
}

/** A 2026-07-28 client on `@modelcontextprotocol/client` 2.x. */
export async function connectV2(url: string, token: string): Promise<McpTestClient> {
  const client = new ClientV2(
    { name: "toolwire-e2e-v2", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const transport = new TransportV2(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return {
    label: "client 2.x (2026-07-28)",
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listTools: () => client.listTools() as Promise<ToolList>,
    call: (name, args, options = {}) =>
      client.callTool(
        { name, arguments: args, _meta: options.meta },
        { ...TIMEOUT, signal: options.signal, onprogress: options.onprogress },
      ) as Promise<ToolResult>,
    close: () => client.close(),
  };
}

/** A task as `tools/call` creates it and `tasks/get` reports it (SEP-2663). */
export interface TaskAnswer {
  resultType: string;
  taskId: string;
  status: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  result?: ToolResult;
  [key: string]: unknown;
}

/** Any JSON-RPC result, checked by the test itself. */
const anyResult = z.looseObject({});

/** A 2026-07-28 client (`@modelcontextprotocol/client` 2.x) that declares the tasks extension. */
export async function connectTasksClient(url: string, token: string) {
  const client = new ClientV2(
    { name: "toolwire-e2e-tasks", version: "2.0.0" },
    {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    },
  );
  const transport = new TransportV2(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  const request = async (method: string, params: Record<string, unknown>) =>
    (await client.request({ method, params }, anyResult, TIMEOUT)) as TaskAnswer;
  return {
    /**
     * `tools/call` of a call named `taskId` (`_meta["io.toolwire/callId"]`: the task id is
     * the invocation id). Client 2.x has no tasks runtime yet: it refuses a `tools/call`
     * answered with `resultType: "task"` (SdkError UnsupportedResultType, the result type
     * in its data), so this resolves with the result type the server answered with.
     */
    async startTask(name: string, args: Record<string, unknown>, taskId: string) {
      try {
        const answer = await request("tools/call", {
          name,
          arguments: args,
          _meta: { "io.toolwire/callId": taskId },
        });
        return answer.resultType;
      } catch (err) {
        const data = (err as { data?: { resultType?: unknown } }).data;
        if (typeof data?.resultType === "string") return data.resultType;
        throw err;
      }
    },
    /**
     * Opens a `subscriptions/listen` stream for `taskIds` (SEP-2663 extends the filter
     * with them; client 2.4.0's `SubscriptionFilter` type has only the core fields) and
     * collects its `notifications/tasks` in arrival order.
     */
    async listenTasks(taskIds: string[]) {
      const notes: TaskAnswer[] = [];
      client.setNotificationHandler(
        "notifications/tasks",
        { params: z.looseObject({ taskId: z.string(), status: z.string() }) },
        (params) => {
          if (taskIds.includes(params.taskId)) notes.push(params as TaskAnswer);
        },
      );
      const subscription = await client.listen({ taskIds } as SubscriptionFilter, TIMEOUT);
      // The SDK settles `closed` as the close frame is read, but runs notification
      // handlers a microtask later (Promise.resolve().then): a note that came just before
      // the close can still be queued. One macrotask lets every queued handler run first.
      const closed = subscription.closed.then(async (how) => {
        await new Promise((resolve) => setTimeout(resolve, 0));
        return how;
      });
      return { notes, closed, close: () => subscription.close() };
    },
    getTask: (taskId: string) => request("tasks/get", { taskId }),
    cancelTask: (taskId: string) => request("tasks/cancel", { taskId }),
    close: () => client.close(),
  };
}
