/**
 * UTF-8 measurements and cut points over JS strings, without encoding the whole string.
 * Lone surrogates count as 3 bytes (they encode as U+FFFD), so a measured length is
 * exactly what `TextEncoder` would produce.
 */

/** Bytes the UTF-8 encoding of one UTF-16 unit at `i` contributes (a pair counts 4 on its lead). */
function unitBytes(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = s.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff ? 4 : 3;
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const prev = s.charCodeAt(i - 1);
    return prev >= 0xd800 && prev <= 0xdbff ? 0 : 3;
  }
  return 3;
}

/** True when index `i` falls between the two halves of a surrogate pair. */
export function splitsSurrogatePair(s: string, i: number): boolean {
  if (i <= 0 || i >= s.length) return false;
  const lead = s.charCodeAt(i - 1);
  const trail = s.charCodeAt(i);
  return lead >= 0xd800 && lead <= 0xdbff && trail >= 0xdc00 && trail <= 0xdfff;
}

/**
 * Length in UTF-8 bytes of `s`, or of `s[from, to)` read as a string of its own (a pair
 * split by the range's edge counts as a lone surrogate). Cost is the range, not `s`.
 * @example utf8ByteLength("é€😀") // 2 + 3 + 4 = 9
 * @example utf8ByteLength("ab😀", 2) // 4
 */
export function utf8ByteLength(s: string, from = 0, to = s.length): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/**
 * UTF-8 bytes of the character that starts at `i`: 4 for a surrogate pair (2 UTF-16
 * units), 3 for a lone surrogate (it encodes as U+FFFD), else 1–3. Only a pair spans two
 * units, so `bytes === 4` says the character is 2 units long.
 * @example utf8CharBytes("😀", 0) // 4
 */
export function utf8CharBytes(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const next = s.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return 4;
  }
  return 3;
}

/** A cut in a string: the UTF-16 index where it falls, and the UTF-8 bytes before it. */
interface Utf8Cut {
  end: number;
  bytes: number;
}

/**
 * The longest run of whole characters of `s` from `from` (before `to`) that fits in
 * `maxBytes` UTF-8 bytes: where it ends and its bytes. Cost is the run, not `s`.
 * @example utf8HeadCut("aé€", 3) // { end: 2, bytes: 3 }
 */
export function utf8HeadCut(s: string, maxBytes: number, from = 0, to = s.length): Utf8Cut {
  let bytes = 0;
  let i = from;
  while (i < to) {
    const w = utf8CharBytes(s, i);
    if (bytes + w > maxBytes) break;
    bytes += w;
    i += w === 4 ? 2 : 1;
  }
  return { end: i, bytes };
}

/**
 * The shortest run of whole characters of `s` from `from` (before `to`) whose UTF-8
 * bytes reach `minBytes` (or all of it): where it ends and its bytes. How a byte cap
 * removes the fewest characters from the front of a text.
 * @example utf8ReachCut("é€a", 3) // { end: 2, bytes: 5 }: "é" alone is 2 bytes
 */
export function utf8ReachCut(s: string, minBytes: number, from = 0, to = s.length): Utf8Cut {
  let bytes = 0;
  let i = from;
  while (bytes < minBytes && i < to) {
    const w = utf8CharBytes(s, i);
    bytes += w;
    i += w === 4 ? 2 : 1;
  }
  return { end: i, bytes };
}

/**
 * The largest index `i` such that `s.slice(0, i)` fits in `maxBytes` UTF-8 bytes and
 * does not end inside a character.
 * @example utf8HeadIndex("aé", 2) // 1: "é" needs bytes 2..3
 */
export function utf8HeadIndex(s: string, maxBytes: number): number {
  return utf8HeadCut(s, maxBytes).end;
}

/**
 * The smallest index `i` such that `s.slice(i)` fits in `maxBytes` UTF-8 bytes and
 * does not start inside a character.
 * @example utf8TailIndex("éa", 2) // 1: keeps "a"
 */
export function utf8TailIndex(s: string, maxBytes: number): number {
  let bytes = 0;
  let i = s.length;
  while (i > 0) {
    const pair = splitsSurrogatePair(s, i - 1);
    const w = pair ? 4 : unitBytes(s, i - 1);
    if (bytes + w > maxBytes) break;
    bytes += w;
    i -= pair ? 2 : 1;
  }
  return i;
}
