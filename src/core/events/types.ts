import type { JsonValue, WireOp } from "../chord/types.ts";
import type { ToolOutputState } from "../output/types.ts";

/** Identity of a tool call; sent once per stream. */
export interface ToolStartEvent {
  type: "tool_start";
  runId: string;
  turnId: string;
  toolCallId: string;
  toolName: string;
  args: JsonValue;
  /** The created sandbox the call runs in (`sbx_…`); absent for the `default` and named hosts. */
  sandbox?: string;
}
/** Ops encoded for one stream; the first of every stream is a base batch. */
export interface ToolUpdateEvent {
  type: "tool_update";
  runId: string;
  turnId: string;
  toolCallId: string;
  ops: WireOp[];
  /**
   * Storage seq of the batch whose state this update brings the reader to: what it
   * names to resume after (socket frames; SSE carries it as the event `id:`).
   */
  seq?: number;
}
/** The call is over; carries no content (the fold is the result). */
export interface ToolEndEvent {
  type: "tool_end";
  runId: string;
  turnId: string;
  toolCallId: string;
  isError: boolean;
}
export type HarnessEvent = ToolStartEvent | ToolUpdateEvent | ToolEndEvent;

type ToolStatus = "running" | "done" | "error";

export interface LaneTool {
  toolCallId: string;
  toolName: string;
  args: JsonValue;
  state: ToolOutputState | null;
  status: ToolStatus;
  isError: boolean;
}
/** A plain view of one run's tool calls, folded from events by `reduceLaneSnapshot`. */
export interface LaneView {
  tools: Record<string, LaneTool>;
  /** Set when an event could not be applied; the consumer should reconnect for a base. */
  needsBase: string[];
}
