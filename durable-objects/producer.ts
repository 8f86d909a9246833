import { apply, assertValidOp } from "../src/chord/index.ts";
import type { JsonValue, Op } from "../src/chord/types.ts";
import type { ToolOutputState } from "../src/output/types.ts";
import { apiError, messageOf } from "./outcome.ts";
import type { ApiError, ProducerCall } from "./protocol.ts";

/** At most this many images per result, each at most `MAX_IMAGE_BASE64` base64 chars (SPEC §5). */
export const MAX_IMAGES = 8;
export const MAX_IMAGE_BASE64 = 1024 * 1024;
/** `details` serialized may not exceed this many bytes (SPEC §5). */
export const MAX_DETAILS_BYTES = 64 * 1024;

const utf8 = new TextEncoder();

/**
 * Checks a producer batch against the current output before anything is applied, so
 * the batch lands whole or not at all: op validity (details ops are applied to a copy),
 * image count and size, details size, usage numbers. Returns the first problem.
 *
 * @example
 * checkCalls([{ details: [["s", ["n"], 1]] }], sink.snapshot()); // null
 */
export function checkCalls(calls: ProducerCall[], current: ToolOutputState): ApiError | null {
  let images = current.content.filter((c) => c.type === "image").length;
  let details: JsonValue = structuredClone(current.details);
  for (const [i, call] of calls.entries()) {
    const at = `calls[${i}]`;
    if ("image" in call) {
      images++;
      if (images > MAX_IMAGES)
        return apiError(
          "too_large",
          `${at}: at most ${MAX_IMAGES} images per result; this would be image ${images}.`,
        );
      if (call.image.data.length > MAX_IMAGE_BASE64) {
        return apiError(
          "too_large",
          `${at}: an image may hold at most ${MAX_IMAGE_BASE64} base64 characters; got ${call.image.data.length}. Scale it down.`,
        );
      }
    } else if ("details" in call) {
      try {
        call.details.forEach((op, k) => {
          assertValidOp(op);
          if (op[0] === "r" && k !== 0)
            throw new Error(`op ${k}: an "r" op may only come first in a batch`);
        });
        details = apply(details, call.details);
      } catch (error) {
        return apiError(
          "bad_request",
          `${at}.details: ${messageOf(error)}. No call of this request was applied.`,
        );
      }
      const bytes = utf8.encode(JSON.stringify(details)).length;
      if (bytes > MAX_DETAILS_BYTES) {
        return apiError(
          "too_large",
          `${at}.details: details would be ${bytes} bytes serialized; the limit is ${MAX_DETAILS_BYTES}.`,
        );
      }
    } else if ("usage" in call) {
      for (const [field, value] of Object.entries(call.usage)) {
        if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
          return apiError(
            "bad_request",
            `${at}.usage.${field}: must be a finite non-negative number; got ${String(value)}.`,
          );
        }
      }
    }
  }
  return null;
}

/** The ops of a `details` call applied to `details`: its new value. */
export function applyDetails(details: JsonValue, ops: Op[]): JsonValue {
  return apply(structuredClone(details), ops);
}
