/**
 * Task status notifications (SEP-2663) on a `subscriptions/listen` stream
 * (docs/decisions/108). A 2026-07-28 client that declares the tasks extension opens a
 * listen stream whose filter names `taskIds`; the stream acknowledges the tasks it
 * honors (those that exist), sends each one's current state at once, then one
 * `notifications/tasks` when it settles (`completed` or `cancelled`, the result
 * inlined exactly as `tasks/get` inlines it), and ends with the graceful-close result
 * once every honored task is terminal. Toolwire tasks change status once (working →
 * terminal), so each watch is the DO's own wait primitive, `result(waitMs)`, not a poll.
 *
 * `@modelcontextprotocol/server` 2.4.0 serves `subscriptions/listen` itself, but its
 * router is closed over the four core filter fields (typescript-sdk#2569): it drops
 * `taskIds` and cannot carry an extension notification. So a listen that names
 * `taskIds` is served here, after the SDK's own request classification; every other
 * listen stays with the SDK. The frames follow the SDK router's wire: the ack first,
 * every notification tagged with the subscription id, `: keepalive` comments.
 */
import {
  classifyInboundRequest,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/server";
import type { InvocationPort } from "./port.ts";
import {
  MISSING_CAPABILITY,
  negotiatedTasks,
  TASKS_EXTENSION,
  type TaskAnswer,
  taskAnswer,
} from "./tasks.ts";

/** Most task ids one listen stream may watch (each is one waiting DO call). */
export const MAX_LISTEN_TASK_IDS = 64;

/** How long one wait on a task's DO lasts before it is renewed (the DO allows 30 s). */
const LISTEN_WAIT_MS = 25_000;

/** The only notification method a task listen stream carries besides its ack. */
const TASK_NOTIFICATION = "notifications/tasks";

/** A `subscriptions/listen` request for task notifications, as read off its body. */
type TaskListen =
  | { ok: true; id: JSONRPCRequest["id"]; taskIds: string[] }
  | { ok: false; id: JSONRPCRequest["id"]; status: number; code: number; message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks the `taskIds` of a listen filter: 1 to `MAX_LISTEN_TASK_IDS` non-empty
 * strings; repeats are watched once. An error names the field and the bound.
 * @example listenTaskIds(["a", "a", "b"]) // { ok: true, taskIds: ["a", "b"] }
 */
export function listenTaskIds(
  value: unknown,
): { ok: true; taskIds: string[] } | { ok: false; message: string } {
  const field = "notifications.taskIds";
  if (!Array.isArray(value) || value.length === 0) {
    return { ok: false, message: `${field}: expected a non-empty array of task ids` };
  }
  if (value.length > MAX_LISTEN_TASK_IDS) {
    return {
      ok: false,
      message: `${field}: at most ${MAX_LISTEN_TASK_IDS} task ids per stream, got ${value.length}; open another stream`,
    };
  }
  const bad = value.findIndex((id) => typeof id !== "string" || id === "");
  if (bad >= 0) return { ok: false, message: `${field}[${bad}]: expected a non-empty string` };
  return { ok: true, taskIds: [...new Set(value as string[])] };
}

/**
 * The task listen a request is, or `undefined` when it is anything else (the SDK
 * serves it, including every classification error and a listen without `taskIds`).
 */
export function taskListenOf(req: Request, body: unknown): TaskListen | undefined {
  const route = classifyInboundRequest({
    httpMethod: req.method,
    body,
    protocolVersionHeader: req.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: req.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: req.headers.get("mcp-name") ?? undefined,
  });
  if (route.kind !== "modern" || route.messageKind !== "request") return undefined;
  const { id, method, params } = route.message;
  if (method !== "subscriptions/listen" || !isRecord(params)) return undefined;
  const filter = params.notifications;
  if (!isRecord(filter) || !("taskIds" in filter)) return undefined;
  const meta = isRecord(params._meta) ? params._meta : undefined;
  if (!negotiatedTasks(meta)) {
    return {
      ok: false,
      id,
      status: 400,
      code: MISSING_CAPABILITY,
      message: `task notifications need the ${TASKS_EXTENSION} extension: declare it in _meta["io.modelcontextprotocol/clientCapabilities"].extensions`,
    };
  }
  const checked = listenTaskIds(filter.taskIds);
  if (!checked.ok) return { ok: false, id, status: 400, code: -32602, message: checked.message };
  return { ok: true, id, taskIds: checked.taskIds };
}

interface TaskListenOptions {
  port: InvocationPort;
  ttlMs: number | null;
  keepAliveMs: number;
  serverInfo: { name: string; version: string };
  /** Aborts when the client's connection goes. */
  signal?: AbortSignal;
}

const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
};

/**
 * Serves one task listen stream.
 * @example return serveTaskListen(listen, { port, ttlMs, keepAliveMs: 15_000, serverInfo })
 */
export async function serveTaskListen(
  listen: TaskListen,
  options: TaskListenOptions,
): Promise<Response> {
  if (!listen.ok) {
    return Response.json(
      { jsonrpc: "2.0", id: listen.id, error: { code: listen.code, message: listen.message } },
      { status: listen.status },
    );
  }
  const { port, ttlMs } = options;
  const subscriptionId = listen.id;
  // Honored: the tasks that exist. An unknown id is left out of the ack, as the SDK
  // leaves out filter fields it cannot deliver.
  const found = await Promise.all(
    listen.taskIds.map(async (taskId) => {
      const view = await port.view(taskId);
      return view.ok ? await taskAnswer(port, view.value, ttlMs) : undefined;
    }),
  );
  const initial = found.filter((task): task is TaskAnswer => task !== undefined);

  const encoder = new TextEncoder();
  let closed = false;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const write = (frame: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(frame));
    } catch {
      stop();
    }
  };
  const send = (message: JSONRPCNotification | JSONRPCResultResponse) =>
    write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  const tagged = (method: string, params: Record<string, unknown>): JSONRPCNotification => ({
    jsonrpc: "2.0",
    method,
    params: { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId } },
  });
  const stop = () => {
    if (closed) return;
    closed = true;
    if (keepAlive !== undefined) clearInterval(keepAlive);
    options.signal?.removeEventListener("abort", stop);
    try {
      controller.close();
    } catch {
      // Already closed or cancelled by the client.
    }
  };
  const closeGracefully = () => {
    send({
      jsonrpc: "2.0",
      id: subscriptionId,
      result: {
        resultType: "complete",
        _meta: {
          [SUBSCRIPTION_ID_META_KEY]: subscriptionId,
          [SERVER_INFO_META_KEY]: options.serverInfo,
        },
      },
    });
    stop();
  };
  /**
   * Waits for a working task to settle and sends its terminal state; false when that
   * could not be done (its DO answered an error, or the stream closed first).
   */
  const watch = async (taskId: string): Promise<boolean> => {
    while (!closed) {
      const poll = await port.result(taskId, LISTEN_WAIT_MS);
      if (!poll.ok) return false;
      if (poll.value.status !== "settled") continue;
      const view = await port.view(taskId);
      if (!view.ok || closed) return false;
      send(tagged(TASK_NOTIFICATION, { ...(await taskAnswer(port, view.value, ttlMs)) }));
      return true;
    }
    return false;
  };

  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      send(
        tagged("notifications/subscriptions/acknowledged", {
          notifications: { taskIds: initial.map((task) => task.taskId) },
        }),
      );
      for (const task of initial) send(tagged(TASK_NOTIFICATION, { ...task }));
      const working = initial.filter((task) => task.status === "working");
      if (working.length === 0) {
        closeGracefully();
        return;
      }
      keepAlive = setInterval(() => write(": keepalive\n\n"), options.keepAliveMs);
      // The graceful close says "every task you asked for reached its end and you were
      // told". When a watch failed, the stream ends without it, and tasks/get tells.
      void Promise.all(working.map((task) => watch(task.taskId).catch(() => false))).then((told) =>
        told.every(Boolean) ? closeGracefully() : stop(),
      );
    },
    cancel() {
      stop();
    },
  });
  if (options.signal?.aborted) stop();
  else options.signal?.addEventListener("abort", stop, { once: true });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
