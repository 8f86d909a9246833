import type { ToolStartEvent } from "./types.ts";

/** The fields every event of one tool call repeats after its `tool_start`. */
interface EventHeader {
  runId: string;
  turnId: string;
  toolCallId: string;
}

/**
 * The header of the events that follow `start` (`tool_update`, `tool_end`).
 * @example ({ ...eventHeader(start), type: "tool_end", isError: false })
 */
export function eventHeader(start: ToolStartEvent): EventHeader {
  return { runId: start.runId, turnId: start.turnId, toolCallId: start.toolCallId };
}
