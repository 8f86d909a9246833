export { type FooterOptions, formatCount, formatSize, formatTruncationFooter } from "./footer.ts";
export {
  assertImage,
  assertToolNames,
  assertTruncation,
  assertUsage,
  detailsSizeError,
  MAX_DETAILS_BYTES,
  MAX_IMAGE_BASE64,
  MAX_IMAGES,
  MAX_NOTICE_BYTES,
  OutputLimitError,
} from "./limits.ts";
export {
  assertOutputState,
  cloneOutputState,
  emptyOutputState,
  ToolOutputSink,
  type ToolOutputSinkOptions,
} from "./sink.ts";
export * from "./types.ts";
export { assertOutputPolicy, countLines, TextWindow, type WindowChange } from "./window.ts";
