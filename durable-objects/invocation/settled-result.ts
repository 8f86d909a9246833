import type { SettledResult, ToolOutputState } from "../../src/core/output/types.ts";

/**
 * The settled result of a final output state: one record, nothing dropped.
 *
 * @example
 * resultOf(output.state, false); // { content, details, terminate, isError: false, truncation }
 */
export function resultOf(state: ToolOutputState, isError: boolean): SettledResult {
  return {
    content: state.content,
    details: state.details,
    ...(state.usage ? { usage: state.usage } : {}),
    ...(state.addedTools ? { addedTools: state.addedTools } : {}),
    terminate: state.terminate,
    isError,
    truncation: state.truncation,
  };
}

/**
 * The output state a settled result stands for: the base a late subscriber folds.
 *
 * @example
 * stateOf(result).content[0]; // { type: "text", text: "..." }
 */
export function stateOf(result: SettledResult): ToolOutputState {
  return {
    content: result.content,
    details: result.details,
    ...(result.usage ? { usage: result.usage } : {}),
    ...(result.addedTools ? { addedTools: result.addedTools } : {}),
    terminate: result.terminate,
    truncation: result.truncation,
  };
}
