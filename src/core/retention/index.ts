export { assertBudget } from "./budget.ts";
export {
  type ItemPush,
  ItemRetainer,
  type ItemRetainerOptions,
  type ItemRetention,
  type ItemStop,
} from "./item-retainer.ts";
export { formatRetentionNotice, type RetentionNotice } from "./notice.ts";
export { describeOmitted, Omitted, type OmittedUnit, unitNoun } from "./omitted.ts";
export { type Dropped, TextQueue } from "./text-queue.ts";
export {
  type TextPush,
  TextRetainer,
  type TextRetainerOptions,
  type TextRetention,
} from "./text-retainer.ts";
export {
  splitsSurrogatePair,
  type Utf8Cut,
  utf8ByteLength,
  utf8CharBytes,
  utf8HeadCut,
  utf8HeadIndex,
  utf8ReachCut,
  utf8TailIndex,
} from "./utf8.ts";
export { type OnUnit, Utf8Segmenter } from "./utf8-segmenter.ts";
