export { type FooterOptions, formatCount, formatSize, formatTruncationFooter } from "./footer.ts";
export {
  assertImage,
  assertToolNames,
  assertTruncation,
  assertUsage,
  copyTruncation,
  detailsSizeError,
  MAX_DETAILS_BYTES,
  MAX_IMAGE_BASE64,
  MAX_IMAGES,
  MAX_NOTICE_BYTES,
  OutputLimitError,
  TRUNCATION_KEYS,
  truncationError,
} from "./limits.ts";
export { messageOf } from "./message-of.ts";
export { ToolOutputSink, type ToolOutputSinkOptions } from "./sink.ts";
export {
  assertOutputState,
  cloneOutputState,
  emptyOutputState,
  isOutputState,
  outputStateError,
} from "./state.ts";
export * from "./types.ts";
export { assertOutputPolicy, countLines, TextWindow, type WindowChange } from "./window.ts";
