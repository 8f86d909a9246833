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
 * The largest index `i` such that `s.slice(0, i)` fits in `maxBytes` UTF-8 bytes and
 * does not end inside a character.
 * @example utf8HeadIndex("aé", 2) // 1: "é" needs bytes 2..3
 */
export function utf8HeadIndex(s: string, maxBytes: number): number {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const pair = splitsSurrogatePair(s, i + 1);
    const w = pair ? 4 : unitBytes(s, i);
    if (bytes + w > maxBytes) break;
    bytes += w;
    i += pair ? 2 : 1;
  }
  return i;
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
