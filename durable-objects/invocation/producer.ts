import { apply, assertValidOp, fitsDepth, MAX_JSON_DEPTH } from "../../src/core/chord/index.ts";
import type { JsonValue, Op } from "../../src/core/chord/types.ts";
import {
  assertImage,
  assertToolNames,
  assertUsage,
  detailsSizeError,
  OutputLimitError,
  type ToolOutputSink,
  type ToolOutputState,
} from "../../src/core/output/index.ts";
import {
  type ApiError,
  apiError,
  messageOf,
  type Outcome,
  type ProducerCall,
  type ProducerEnd,
  refusal,
} from "../../src/protocol/index.ts";
import { EXTERNAL_TOOL } from "../../src/tools/index.ts";
import type { InvocationRecord } from "./output/store.ts";
import type { Ending } from "./settle-table.ts";

/**
 * Checks a producer batch against the current output before anything is applied, so
 * the batch lands whole or not at all: details ops are validated and applied to a copy
 * (size checked), images counted and sized, usage and tool names checked. Returns the
 * first problem (`too_large` for a broken bound, `bad_request` otherwise), or null.
 *
 * @example
 * checkCalls([{ details: [["s", ["n"], 1]] }], sink.snapshot()); // null
 */
export function checkCalls(calls: ProducerCall[], current: ToolOutputState): ApiError | null {
  let images = current.content.length - 1;
  let details: JsonValue = structuredClone(current.details);
  for (const [i, call] of calls.entries()) {
    const at = `calls[${i}]`;
    try {
      if ("image" in call) {
        assertImage(call.image, images);
        images++;
      } else if ("details" in call) {
        details = applyDetails(details, call.details);
        const tooLarge = detailsSizeError(
          JSON.stringify(details),
          "That is what the details ops of this request would make it.",
        );
        if (tooLarge) throw tooLarge;
      } else if ("usage" in call) {
        assertUsage(call.usage);
      } else if ("addTools" in call) {
        assertToolNames(call.addTools);
      }
    } catch (error) {
      const code = error instanceof OutputLimitError ? "too_large" : "bad_request";
      return apiError(code, `${at}: ${messageOf(error)} No call of this request was applied.`);
    }
  }
  return null;
}

/**
 * Why this invocation takes no producer output, or null when it does: only a running
 * `external` invocation does.
 * @example refuseOutput(record) // null, or a 409 conflict
 */
export function refuseOutput(record: InvocationRecord): Outcome<never> | null {
  if (record.tool !== EXTERNAL_TOOL) {
    return refusal(
      "conflict",
      `Invocation runs tool "${record.tool}"; only "external" invocations accept output.`,
    );
  }
  if (record.status === "settled")
    return refusal("conflict", "Invocation already ended; no more output is accepted.");
  return null;
}

/**
 * How the producer's `end` ends the run.
 * @example endingOf({ isError: true }) // { kind: "failedQuietly" }
 */
export function endingOf(end: ProducerEnd): Ending {
  if (!end.isError) return { kind: "completed" };
  return end.error ? { kind: "failed", error: end.error } : { kind: "failedQuietly" };
}

/**
 * Applies one checked call to the sink (`checkCalls` ran first, so none throws).
 *
 * @example
 * applyCall(sink, { write: "hello\n" });
 */
export function applyCall(sink: ToolOutputSink, call: ProducerCall): void {
  if ("write" in call) sink.write(call.write);
  else if ("replace" in call) sink.replace(call.replace);
  else if ("image" in call) sink.image(call.image);
  else if ("details" in call)
    sink.replaceDetails(applyDetails(sink.snapshot().details, call.details));
  else if ("usage" in call) sink.usage(call.usage);
  else if ("addTools" in call) sink.addTools(call.addTools);
  else sink.terminate(call.terminate);
}

/** `details` sits one level inside the output state, whose depth is capped (docs/decisions/005). */
const MAX_DETAILS_DEPTH = MAX_JSON_DEPTH - 1;

/** `details` after a batch of untrusted ops; throws a clear error for a bad op. */
function applyDetails(details: JsonValue, ops: Op[]): JsonValue {
  if (!Array.isArray(ops)) throw new TypeError("details must be an array of Chord ops.");
  ops.forEach((op, k) => {
    assertValidOp(op);
    if (op[0] === "r" && k !== 0)
      throw new TypeError(`details[${k}]: an "r" op may only come first in a batch.`);
  });
  const next = apply(structuredClone(details), ops);
  if (!fitsDepth(next, MAX_DETAILS_DEPTH)) {
    throw new TypeError(
      `details would nest arrays and objects more than ${MAX_DETAILS_DEPTH} levels deep; the output state may nest at most ${MAX_JSON_DEPTH} (MAX_JSON_DEPTH) and details sits one level inside it. Flatten it or send the deep part as a JSON string.`,
    );
  }
  return next;
}
