/** What the stored record of an invocation looks like from outside. */
import type { ToolStartEvent } from "../../../src/core/events/index.ts";
import type { ToolOutputState } from "../../../src/core/output/index.ts";
import type { InvocationView } from "../../../src/protocol/index.ts";
import type { InvocationRecord } from "../output/store.ts";

/**
 * The view `view()`, `start()`, `cancel()` and `produce()` answer with.
 * @example viewOf(record, output.state).status // "running"
 */
export function viewOf(r: InvocationRecord, state: ToolOutputState): InvocationView {
  return {
    id: r.toolCallId,
    tool: r.tool,
    args: r.args,
    runId: r.runId,
    turnId: r.turnId,
    sandbox: r.sandbox,
    status: r.status,
    state,
    ...(r.status === "settled" ? { isError: r.isError, cancelled: r.cancelled } : {}),
    createdAt: r.createdAt,
    ...(r.settledAt !== null ? { settledAt: r.settledAt } : {}),
  };
}

/**
 * The `tool_start` event every subscriber gets first.
 * @example startEventOf(record).toolName // "bash"
 */
export function startEventOf(r: InvocationRecord): ToolStartEvent {
  return {
    type: "tool_start",
    runId: r.runId,
    turnId: r.turnId,
    toolCallId: r.toolCallId,
    toolName: r.tool,
    args: r.args,
    ...(r.sandbox.startsWith("sbx_") ? { sandbox: r.sandbox } : {}),
  };
}

/**
 * The record of a call `start` creates: running, nothing settled yet.
 * @example newRecord(request, Date.now()).status // "running"
 */
export function newRecord(
  req: Pick<InvocationRecord, "toolCallId" | "tool" | "args" | "runId" | "turnId" | "sandbox">,
  createdAt: number,
): InvocationRecord {
  return {
    toolCallId: req.toolCallId,
    tool: req.tool,
    args: req.args,
    runId: req.runId,
    turnId: req.turnId,
    sandbox: req.sandbox,
    status: "running",
    isError: false,
    cancelled: false,
    createdAt,
    settledAt: null,
    deleteAt: null,
    checkpointSeq: null,
  };
}
