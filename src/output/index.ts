export { type FooterOptions, formatCount, formatSize, formatTruncationFooter } from "./footer.ts";
export * from "./types.ts";
export { assertOutputPolicy, countLines, TextWindow, type WindowChange } from "./window.ts";
