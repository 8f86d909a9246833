/**
 * A naive reference for `TextWindow`: recomputes the window from the whole text with
 * `split`/`slice`, exactly as decision 020 words the rules.
 */
import type { OutputPolicy, Truncation } from "../../../src/core/output/types.ts";
import { utf8ByteLength, utf8HeadIndex, utf8TailIndex } from "../../../src/core/retention/utf8.ts";

export function lines(s: string): number {
  if (s === "") return 0;
  const n = s.split("\n").length - 1;
  return s.endsWith("\n") ? n : n + 1;
}

/** Line start offsets of `s`: 0 and every index after a "\n" (including `s.length` if it ends with one). */
function lineStarts(s: string): number[] {
  const out = [0];
  for (let i = 0; i < s.length; i++) if (s[i] === "\n") out.push(i + 1);
  return out;
}

export interface ReferenceWindow {
  text: string;
  truncation: Truncation;
}

export function referenceWindow(all: string, policy: OutputPolicy): ReferenceWindow {
  const { maxBytes, maxLines } = policy;
  const held = all.length > 0 && /[\uD800-\uDBFF]$/.test(all) ? 1 : 0;
  const f = all.slice(0, all.length - held);
  const totals = { totalLines: lines(all), totalBytes: utf8ByteLength(all), maxLines, maxBytes };
  if (policy.retain === "head") {
    const starts = lineStarts(f);
    const pl = maxLines === 0 ? 0 : maxLines < starts.length ? starts[maxLines]! : f.length;
    const pb = utf8HeadIndex(f, maxBytes);
    const p = Math.min(pl, pb);
    const text = f.slice(0, p);
    const truncated = p < f.length;
    const truncatedBy = truncated ? (pl <= pb ? "lines" : "bytes") : null;
    const partial = text !== "" && !text.endsWith("\n");
    return {
      text,
      truncation: {
        ...totals,
        truncated,
        truncatedBy,
        outputLines: lines(text),
        outputBytes: utf8ByteLength(text),
        lastLinePartial: truncated && partial,
        firstLineExceedsLimit: truncatedBy === "bytes" && !text.includes("\n"),
      },
    };
  }
  let start: number;
  let partial = false;
  const starts = lineStarts(f).filter((s) => s < f.length);
  const lastLineStart = starts.length > 0 ? starts[starts.length - 1]! : 0;
  if (f === "") start = 0;
  else if (maxLines === 0) start = f.length;
  else if (utf8ByteLength(f.slice(lastLineStart)) > maxBytes) {
    const tail = f.slice(lastLineStart);
    start = lastLineStart + utf8TailIndex(tail, maxBytes);
    partial = start > 0;
  } else {
    start = starts.find(
      (s) => lines(f.slice(s)) <= maxLines && utf8ByteLength(f.slice(s)) <= maxBytes,
    )!;
  }
  const text = f.slice(start);
  const truncated = start > 0;
  const outputLines = lines(text);
  return {
    text,
    truncation: {
      ...totals,
      truncated,
      truncatedBy: truncated ? (!partial && outputLines >= maxLines ? "lines" : "bytes") : null,
      outputLines,
      outputBytes: utf8ByteLength(text),
      lastLinePartial: partial,
      firstLineExceedsLimit: false,
    },
  };
}
