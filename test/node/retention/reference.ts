/**
 * Slow, obviously-correct references for the retainers, built on `TextDecoder` and
 * `TextEncoder` only: what the retained text must be, and how many input bytes it spans.
 */
import type { TextRetainerOptions } from "../../../src/core/retention/index.ts";

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encoder = new TextEncoder();

export const decode = (bytes: Uint8Array): string => decoder.decode(bytes);
export const encode = (s: string): Uint8Array => encoder.encode(s);
export const size = (s: string): number => encoder.encode(s).length;

export function concat(parts: (string | Uint8Array)[]): Uint8Array {
  const chunks = parts.map((p) => (typeof p === "string" ? encode(p) : p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function longestPrefix(chars: string[], budget: number): string[] {
  let used = 0;
  let n = 0;
  while (n < chars.length && used + size(chars[n]!) <= budget) used += size(chars[n++]!);
  return chars.slice(0, n);
}

function longestSuffix(chars: string[], budget: number): string[] {
  return longestPrefix([...chars].reverse(), budget).reverse();
}

/** Input bytes a decoded head spans: the longest prefix that decodes to exactly it. */
function headSpan(bytes: Uint8Array, text: string): number {
  for (let k = bytes.length; k >= 0; k--) if (decode(bytes.subarray(0, k)) === text) return k;
  throw new Error("no prefix decodes to the head");
}

/** Input bytes a decoded tail spans: the longest suffix that decodes to exactly it. */
function tailSpan(bytes: Uint8Array, from: number, text: string): number {
  for (let j = from; j <= bytes.length; j++)
    if (decode(bytes.subarray(j)) === text) return bytes.length - j;
  throw new Error("no suffix decodes to the tail");
}

export interface Expected {
  text: string;
  omittedByteCount: number;
  omittedAt?: number;
}

/** What a retainer must return for the whole input `bytes`. */
export function expected(options: TextRetainerOptions, bytes: Uint8Array): Expected {
  const chars = Array.from(decode(bytes));
  const all = chars.join("");
  if (options.kind === "head") {
    const text = longestPrefix(chars, options.maxBytes).join("");
    const omittedByteCount = bytes.length - headSpan(bytes, text);
    return omittedByteCount > 0
      ? { text, omittedByteCount, omittedAt: text.length }
      : { text, omittedByteCount };
  }
  if (options.kind === "tail") {
    const text = longestSuffix(chars, options.maxBytes).join("");
    const omittedByteCount = bytes.length - tailSpan(bytes, 0, text);
    return omittedByteCount > 0
      ? { text, omittedByteCount, omittedAt: 0 }
      : { text, omittedByteCount };
  }
  if (size(all) <= options.headBytes + options.tailBytes) return { text: all, omittedByteCount: 0 };
  const head = longestPrefix(chars, options.headBytes).join("");
  const tail = longestSuffix(chars, options.tailBytes).join("");
  const headBytes = headSpan(bytes, head);
  const omittedByteCount = bytes.length - headBytes - tailSpan(bytes, headBytes, tail);
  return { text: head + tail, omittedByteCount, omittedAt: head.length };
}

/** The budget a retainer's output must fit. */
export function budgetOf(options: TextRetainerOptions): number {
  return options.kind === "headTail" ? options.headBytes + options.tailBytes : options.maxBytes;
}
