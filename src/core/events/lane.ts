/**
 * Folding events into a `LaneView` (docs/design.md#events-and-lanes). The view stays plain JSON:
 * each tool's stream decoder lives beside it, in a `WeakMap` keyed by the view.
 * See docs/decisions/023-lane-fold.md.
 */
import { apply, type Decoder, decoder, isBase } from "../chord/index.ts";
import type { JsonValue, Op } from "../chord/types.ts";
import type { ToolOutputState } from "../output/types.ts";
import type { HarnessEvent, LaneTool, LaneView } from "./types.ts";

/** Per view: one decoder per tool stream (toolCallId → decoder). */
const decodersOf = new WeakMap<LaneView, Map<string, Decoder>>();

/**
 * An empty lane: no tools, nothing waiting for a base.
 * @example const view = createLaneView();
 */
export function createLaneView(): LaneView {
  return { tools: {}, needsBase: [] };
}

function toolOf(view: LaneView, toolCallId: string): LaneTool {
  let tool = view.tools[toolCallId];
  if (tool === undefined) {
    tool = { toolCallId, toolName: "", args: null, state: null, status: "running", isError: false };
    view.tools[toolCallId] = tool;
  }
  return tool;
}

function markNeedsBase(view: LaneView, toolCallId: string): void {
  if (!view.needsBase.includes(toolCallId)) view.needsBase.push(toolCallId);
}

function clearNeedsBase(view: LaneView, toolCallId: string): void {
  const i = view.needsBase.indexOf(toolCallId);
  if (i >= 0) view.needsBase.splice(i, 1);
}

function decoderFor(view: LaneView, toolCallId: string): Decoder {
  let byTool = decodersOf.get(view);
  if (byTool === undefined) {
    byTool = new Map();
    decodersOf.set(view, byTool);
  }
  let dec = byTool.get(toolCallId);
  if (dec === undefined) {
    dec = decoder();
    byTool.set(toolCallId, dec);
  }
  return dec;
}

/**
 * Folds one event into `view` by plain mutation.
 *
 * - `tool_start` creates the tool (or keeps it and its state, e.g. on a reconnect).
 * - `tool_update` decodes with the tool's own stream decoder and applies. A base batch
 *   replaces the state. A delta for a tool with no state, a delta after a failure, or
 *   ops that do not decode or apply leave the state as it was and list the tool in
 *   `view.needsBase`: the consumer reconnects, and the next base clears it.
 * - `tool_end` sets `status` ("done" / "error") and `isError`.
 * Unknown event types are ignored (newer producers); an event without a string
 * `toolCallId` throws a `TypeError` and changes nothing.
 *
 * @example
 * const view = createLaneView();
 * for (const event of events) reduceLaneSnapshot(view, event);
 * if (view.needsBase.length > 0) reconnect();
 */
export function reduceLaneSnapshot(view: LaneView, event: HarnessEvent): void {
  if (event === null || typeof event !== "object" || typeof event.toolCallId !== "string") {
    throw new TypeError("A harness event must be an object with a string toolCallId.");
  }
  const id = event.toolCallId;
  switch (event.type) {
    case "tool_start": {
      const tool = toolOf(view, id);
      tool.toolName = event.toolName;
      tool.args = event.args;
      return;
    }
    case "tool_update": {
      const tool = toolOf(view, id);
      let ops: Op[];
      try {
        ops = decoderFor(view, id).decode(event.ops);
      } catch {
        markNeedsBase(view, id);
        return;
      }
      const base = isBase(ops);
      if (!base && (tool.state === null || view.needsBase.includes(id))) {
        markNeedsBase(view, id);
        return;
      }
      try {
        // `apply` is all-or-nothing: on error the state is exactly as before.
        const next = apply(base ? null : (tool.state as unknown as JsonValue), ops);
        tool.state = next as unknown as ToolOutputState;
      } catch {
        markNeedsBase(view, id);
        return;
      }
      if (base) clearNeedsBase(view, id);
      return;
    }
    case "tool_end": {
      const tool = toolOf(view, id);
      tool.status = event.isError ? "error" : "done";
      tool.isError = event.isError;
      decodersOf.get(view)?.delete(id);
      return;
    }
    default:
      return;
  }
}
