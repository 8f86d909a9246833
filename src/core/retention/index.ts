export { ItemRetainer } from "./item-retainer.ts";
export { formatRetentionNotice } from "./notice.ts";
export { describeOmitted, Omitted } from "./omitted.ts";
export { TextQueue } from "./text-queue.ts";
export { TextRetainer, type TextRetainerOptions, type TextRetention } from "./text-retainer.ts";
export {
  splitsSurrogatePair,
  utf8ByteLength,
  utf8CharBytes,
  utf8HeadCut,
  utf8HeadIndex,
  utf8ReachCut,
  utf8TailIndex,
} from "./utf8.ts";
export { Utf8Segmenter } from "./utf8-segmenter.ts";
