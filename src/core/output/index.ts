export { formatCount, formatSize } from "./footer.ts";
export { LATEST_LINE_MAX, latestLine } from "./latest-line.ts";
/** The sink's bounds and the checks at them, every one of them public. */
export * from "./limits.ts";
export { messageOf } from "./message-of.ts";
export { ToolOutputSink } from "./sink.ts";
export { emptyOutputState } from "./state.ts";
export { plainTerminalText } from "./terminal-text.ts";
export * from "./types.ts";
export { TextWindow } from "./window.ts";
