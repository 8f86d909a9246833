/**
 * `ToolOutputState` values: a fresh one, a copy, and the one check of a state's shape and
 * bounds that the sink (seeding from storage) and the client's replica (after a fold) share.
 */
import type { JsonValue } from "../chord/types.ts";
import {
  assertImage,
  assertToolNames,
  assertUsage,
  copyTruncation,
  detailsSizeError,
  truncationError,
} from "./limits.ts";
import type { ToolOutputState, Truncation } from "./types.ts";

/** A fresh state: one empty text block, `details` `{}`, `terminate` false. */
export function emptyOutputState(truncation: Truncation): ToolOutputState {
  return {
    content: [{ type: "text", text: "" }],
    details: {},
    terminate: false,
    truncation: copyTruncation(truncation),
  };
}

/**
 * A deep copy of `state` that shares only immutable strings (image data is not copied).
 * @example const copy = cloneOutputState(sink.snapshot());
 */
export function cloneOutputState(state: ToolOutputState): ToolOutputState {
  const copy: ToolOutputState = {
    content: state.content.map((c) =>
      c.type === "text"
        ? { type: "text", text: c.text }
        : { type: "image", data: c.data, mimeType: c.mimeType },
    ),
    details: JSON.parse(JSON.stringify(state.details)) as JsonValue,
    terminate: state.terminate,
    truncation: { ...state.truncation },
  };
  if (state.usage !== undefined) copy.usage = { ...state.usage };
  if (state.addedTools !== undefined) copy.addedTools = [...state.addedTools];
  return copy;
}

/**
 * What is wrong with `state` as a `ToolOutputState` within the sink's bounds (one text
 * block then at most 8 images, `terminate`, `usage`, `addedTools`, every truncation field,
 * `details` at most 64 KiB serialized), or null when nothing is.
 * @example outputStateError({ content: [] }) // TypeError: ...must start with one text block...
 */
export function outputStateError(state: unknown): Error | null {
  try {
    assertOutputState(state);
    return null;
  } catch (error) {
    return error as Error;
  }
}

/**
 * True when `state` is a well-formed `ToolOutputState` within the sink's bounds.
 * @example if (!isOutputState(folded)) askForBase();
 */
export function isOutputState(state: unknown): state is ToolOutputState {
  return outputStateError(state) === null;
}

/** Throws unless `state` is a well-formed `ToolOutputState` within the sink's bounds. */
export function assertOutputState(state: unknown): asserts state is ToolOutputState {
  if (state === null || typeof state !== "object") {
    throw new TypeError(
      "An output state must be an object { content, details, terminate, truncation }.",
    );
  }
  const s = state as Partial<ToolOutputState>;
  const content = s.content;
  if (
    !Array.isArray(content) ||
    content[0]?.type !== "text" ||
    typeof content[0].text !== "string"
  ) {
    throw new TypeError(
      'An output state\'s content must start with one text block { type: "text", text }.',
    );
  }
  content.slice(1).forEach((c, i) => {
    if (c?.type !== "image") {
      throw new TypeError(`content[${i + 1}] must be an image: only the first block is text.`);
    }
    assertImage(c, i);
  });
  if (typeof s.terminate !== "boolean")
    throw new TypeError("An output state's terminate must be a boolean.");
  if (s.usage !== undefined) assertUsage(s.usage);
  if (s.addedTools !== undefined) assertToolNames(s.addedTools);
  const badTruncation = truncationError(s.truncation, "truncation");
  if (badTruncation) throw badTruncation;
  const tooLarge = detailsSizeError(
    JSON.stringify(s.details ?? null),
    "A state with such details cannot be used.",
  );
  if (tooLarge) throw tooLarge;
}
