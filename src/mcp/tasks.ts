/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) over the invocation DO
 * (docs/decisions/106). A task is an invocation: its id is the invocation id, its state
 * is the DO's, so a client that leaves and comes back (even after the DO was evicted)
 * reads the same task. Served on 2026-07-28 only, to requests whose
 * `_meta["io.modelcontextprotocol/clientCapabilities"].extensions` name the extension.
 *
 * - `tools/call` of a Toolwire tool answers with a flat `CreateTaskResult` once the DO
 *   has stored the invocation (so an immediate `tasks/get` finds it).
 * - `tasks/get`: `working` while it runs; `completed` with the bounded fold inlined
 *   under `result` (a tool error is `completed` with `result.isError`); `cancelled` with
 *   the fold of the partial output. Toolwire has no `failed` and no `input_required`:
 *   every ending of a run is a result with its output kept, and no tool asks for input.
 * - `tasks/cancel`: cancels the invocation (output kept); an empty ack, also once settled.
 * - `tasks/update`: nothing to deliver (no task waits for input); an empty ack.
 * - `tasks/result` and `tasks/list` stay unregistered: `-32601`, as SEP-2663 removed them.
 */
import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { InvocationView } from "../protocol/index.ts";
import { settledResult } from "./call.ts";
import { InvocationError, unwrapOutcome } from "./outcome.ts";
import type { InvocationPort } from "./port.ts";
import { PROGRESS_INTERVAL_MS } from "./progress.ts";

/** The extension's identifier, in capabilities and in a request's client capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** `_meta` key of a 2026-07-28 request's client capabilities. */
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** JSON-RPC code of "Missing Required Client Capability" (SEP-2575). */
export const MISSING_CAPABILITY = -32021;

/** SEP-2663 task statuses Toolwire reports. */
type TaskStatus = "working" | "completed" | "cancelled";

/** The fields every task answer carries (SEP-2663 `Task`). */
interface TaskFields {
  taskId: string;
  status: TaskStatus;
  createdAt: string;
  lastUpdatedAt: string;
  /** How long the task stays readable from its creation; `null`: no bound given. */
  ttlMs: number | null;
  pollIntervalMs: number;
}

/**
 * Whether a request's `_meta` declares the tasks extension among the client's capabilities.
 * @example negotiatedTasks({ "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } }) // true
 */
export function negotiatedTasks(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.[CLIENT_CAPABILITIES];
  if (typeof capabilities !== "object" || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== "object" || extensions === null) return false;
  const declared = (extensions as Record<string, unknown>)[TASKS_EXTENSION];
  return declared !== undefined && declared !== null;
}

/**
 * Whether a request declared the tasks extension. The SDK lifts the 2026-07-28 envelope
 * keys (client capabilities among them) out of `_meta` into `envelope`; both are read.
 */
export function requestDeclaresTasks(mcpReq: { _meta?: unknown; envelope?: unknown }): boolean {
  const meta = (mcpReq._meta ?? {}) as Record<string, unknown>;
  const envelope = (mcpReq.envelope ?? {}) as Record<string, unknown>;
  return negotiatedTasks({ ...meta, ...envelope });
}

/**
 * The status of the task an invocation is.
 * @example taskStatus({ status: "settled", cancelled: true } as InvocationView) // "cancelled"
 */
export function taskStatus(view: Pick<InvocationView, "status" | "cancelled">): TaskStatus {
  if (view.status !== "settled") return "working";
  return view.cancelled === true ? "cancelled" : "completed";
}

/**
 * The `Task` fields of an invocation. `ttlMs` is how long a settled invocation is kept
 * (`SETTLED_RETENTION_DAYS`): a task is readable at least that long after its creation,
 * since it is kept that long after it settles.
 * @example taskFields(view, 604_800_000).status // "working"
 */
export function taskFields(view: InvocationView, ttlMs: number | null): TaskFields {
  const createdAt = new Date(view.createdAt).toISOString();
  return {
    taskId: view.id,
    status: taskStatus(view),
    createdAt,
    lastUpdatedAt:
      view.settledAt === undefined ? createdAt : new Date(view.settledAt).toISOString(),
    ttlMs,
    pollIntervalMs: PROGRESS_INTERVAL_MS,
  };
}

/** A task as `tasks/get` and `notifications/tasks` report it: the result inlined once settled. */
export type TaskAnswer = TaskFields & { result?: CallToolResult };

/**
 * The task an invocation is, with its bounded fold under `result` once settled (the DO
 * stores a settled result, so this is the same answer every time).
 * @example (await taskAnswer(port, view, 604_800_000)).status // "completed"
 */
export async function taskAnswer(
  port: InvocationPort,
  view: InvocationView,
  ttlMs: number | null,
): Promise<TaskAnswer> {
  const fields = taskFields(view, ttlMs);
  if (fields.status === "working") return fields;
  return { ...fields, result: await settledResult(port, view.id) };
}

/**
 * The flat `CreateTaskResult` of a started invocation, as a `tools/call` answer. (The
 * SDK's `tools/call` check adds an empty `content` to results that have none.)
 */
export function createTaskResult(view: InvocationView, ttlMs: number | null): CallToolResult {
  return { resultType: "task", ...taskFields(view, ttlMs) } as unknown as CallToolResult;
}

/** The `-32021` error of a tasks method called without the extension negotiated. */
function missingCapability(method: string): ProtocolError {
  return new ProtocolError(
    MISSING_CAPABILITY,
    `${method} needs the ${TASKS_EXTENSION} extension: declare it in _meta["${CLIENT_CAPABILITIES}"].extensions`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** The view of task `taskId`, or `-32602` naming it when there is no such invocation. */
async function viewOfTask(port: InvocationPort, taskId: string): Promise<InvocationView> {
  const outcome = await port.view(taskId);
  if (!outcome.ok && outcome.error.code === "not_found") {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `taskId: no task "${taskId}" (never created, or deleted after its retention period)`,
    );
  }
  return unwrapOutcome(outcome);
}

const TaskParams = z.looseObject({ taskId: z.string().min(1) });
const UpdateParams = z.looseObject({
  taskId: z.string().min(1),
  inputResponses: z.record(z.string(), z.unknown()).optional(),
});
const AnyResult = z.looseObject({});

/**
 * Registers `tasks/get`, `tasks/cancel` and `tasks/update` on `server` and advertises
 * the extension.
 * @example registerTaskMethods(server, port, 604_800_000)
 */
export function registerTaskMethods(
  server: McpServer,
  port: InvocationPort,
  ttlMs: number | null,
): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  const gate = (method: string, mcpReq: { _meta?: unknown; envelope?: unknown }) => {
    if (!requestDeclaresTasks(mcpReq)) throw missingCapability(method);
  };

  server.server.setRequestHandler(
    "tasks/get",
    { params: TaskParams, result: AnyResult },
    async (params, ctx) => {
      gate("tasks/get", ctx.mcpReq);
      return { ...(await taskAnswer(port, await viewOfTask(port, params.taskId), ttlMs)) };
    },
  );

  server.server.setRequestHandler(
    "tasks/cancel",
    { params: TaskParams, result: AnyResult },
    async (params, ctx) => {
      gate("tasks/cancel", ctx.mcpReq);
      const view = await viewOfTask(port, params.taskId);
      if (view.status !== "settled") {
        const cancelled = await port.cancel(view.id);
        // `conflict`: it settled between the view and the cancel; the ack stands.
        if (!cancelled.ok && cancelled.error.code !== "conflict") {
          throw new InvocationError(cancelled.error.code, cancelled.error.message);
        }
      }
      return {};
    },
  );

  server.server.setRequestHandler(
    "tasks/update",
    { params: UpdateParams, result: AnyResult },
    async (params, ctx) => {
      gate("tasks/update", ctx.mcpReq);
      // No Toolwire task waits for input: responses for unknown keys are ignored (SEP-2663).
      await viewOfTask(port, params.taskId);
      return {};
    },
  );
}
