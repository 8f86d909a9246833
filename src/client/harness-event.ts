import type { HarnessEvent } from "../core/events/types.ts";
import { isRecord } from "./errors.ts";

/** A frame parsed: an event, a frame of a kind this client does not know (skipped), or garbage. */
type ParsedFrame =
  | { kind: "event"; event: HarnessEvent }
  | { kind: "unknown" }
  | { kind: "malformed"; reason: string };

/**
 * Parses one WebSocket frame or SSE `data:` payload. Frames are untrusted: the shape
 * of the three harness events is checked; ops are checked later by the decoder.
 *
 * @example
 * parseFrame('{"type":"tool_end","runId":"r","turnId":"t","toolCallId":"c","isError":false}')
 */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "malformed", reason: "a frame is not JSON" };
  }
  if (!isRecord(value) || typeof value.type !== "string") {
    return { kind: "malformed", reason: "a frame has no event type" };
  }
  switch (value.type) {
    case "tool_start":
      return typeof value.toolName === "string"
        ? { kind: "event", event: value as unknown as HarnessEvent }
        : { kind: "malformed", reason: "tool_start without toolName" };
    case "tool_update":
      return Array.isArray(value.ops)
        ? { kind: "event", event: value as unknown as HarnessEvent }
        : { kind: "malformed", reason: "tool_update without ops" };
    case "tool_end":
      return typeof value.isError === "boolean"
        ? { kind: "event", event: value as unknown as HarnessEvent }
        : { kind: "malformed", reason: "tool_end without isError" };
    default:
      return { kind: "unknown" };
  }
}
