import type { Op, WireOp } from "../../../src/core/chord/types.ts";

/** Encodes one stream's batches (path tables are per stream: WebSocket group or SSE stream). */
export interface StreamEncoder {
  encode(ops: Op[]): WireOp[];
}
