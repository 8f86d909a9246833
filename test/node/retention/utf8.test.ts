import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  splitsSurrogatePair,
  Utf8Segmenter,
  utf8ByteLength,
  utf8CharBytes,
  utf8HeadCut,
  utf8HeadIndex,
  utf8ReachCut,
  utf8TailIndex,
} from "../../../src/core/retention/index.ts";
import { validRunEnd } from "../../../src/core/retention/utf8-segmenter.ts";
import { decode, encode } from "./reference.ts";

/** Strings rich in what goes wrong: pairs, lone halves of both kinds, 1- to 3-byte units. */
const trickyString = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 4 }),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      fc.constantFrom("a", "é", "€", "😀", "\ud83d", "\ude00", "\ude00\ud83d"),
    ),
    { maxLength: 20 },
  )
  .map((parts) => parts.join(""));

const bytesOf = (s: string): number => encode(s).length;

describe("utf8 helpers", () => {
  it("measures like TextEncoder, lone surrogates included", () => {
    expect(utf8ByteLength("é€😀")).toBe(9);
    expect(utf8ByteLength("\ud800")).toBe(3);
    expect(utf8ByteLength("\ude00\ud83d")).toBe(6);
    fc.assert(
      fc.property(trickyString, (s) => {
        expect(utf8ByteLength(s)).toBe(bytesOf(s));
      }),
      { seed: 1, numRuns: 3000 },
    );
  });

  it("finds the longest head that fits and never splits a pair", () => {
    expect(utf8HeadIndex("aé", 2)).toBe(1);
    expect(utf8HeadIndex("😀", 3)).toBe(0);
    expect(utf8HeadIndex("😀", 4)).toBe(2);
    fc.assert(
      fc.property(trickyString, fc.nat(40), (s, max) => {
        const i = utf8HeadIndex(s, max);
        expect(splitsSurrogatePair(s, i)).toBe(false);
        expect(bytesOf(s.slice(0, i))).toBeLessThanOrEqual(max);
        if (i < s.length) {
          const next = splitsSurrogatePair(s, i + 1) ? i + 2 : i + 1;
          expect(bytesOf(s.slice(0, next))).toBeGreaterThan(max);
        }
      }),
      { seed: 2, numRuns: 3000 },
    );
  });

  it("cuts a range at whole characters: the longest run within a budget, the shortest reaching one", () => {
    expect(utf8HeadCut("aé€", 3)).toEqual({ end: 2, bytes: 3 });
    expect(utf8ReachCut("é€a", 3)).toEqual({ end: 2, bytes: 5 });
    expect(utf8CharBytes("😀", 0)).toBe(4);
    expect(utf8CharBytes("\ud83d", 0)).toBe(3);
    fc.assert(
      fc.property(trickyString, fc.nat(40), fc.nat(20), (s, n, at) => {
        const from = Math.min(at, s.length);
        // Start at a character boundary, as callers do.
        const start = splitsSurrogatePair(s, from) ? from - 1 : from;
        const head = utf8HeadCut(s, n, start);
        expect(head.bytes).toBe(utf8ByteLength(s, start, head.end));
        expect(head.bytes).toBeLessThanOrEqual(n);
        expect(splitsSurrogatePair(s, head.end)).toBe(false);
        if (head.end < s.length) {
          expect(head.bytes + utf8CharBytes(s, head.end)).toBeGreaterThan(n);
        }
        const reach = utf8ReachCut(s, n, start);
        expect(reach.bytes).toBe(utf8ByteLength(s, start, reach.end));
        expect(splitsSurrogatePair(s, reach.end)).toBe(false);
        if (reach.end < s.length) expect(reach.bytes).toBeGreaterThanOrEqual(n);
        if (reach.end > start) {
          const last = splitsSurrogatePair(s, reach.end - 1) ? reach.end - 2 : reach.end - 1;
          expect(utf8ByteLength(s, start, last)).toBeLessThan(n);
        }
      }),
      { seed: 4, numRuns: 3000 },
    );
  });

  it("finds the longest tail that fits and never splits a pair", () => {
    expect(utf8TailIndex("éa", 2)).toBe(1);
    expect(utf8TailIndex("😀", 3)).toBe(2);
    expect(utf8TailIndex("😀", 4)).toBe(0);
    fc.assert(
      fc.property(trickyString, fc.nat(40), (s, max) => {
        const i = utf8TailIndex(s, max);
        expect(splitsSurrogatePair(s, i)).toBe(false);
        expect(bytesOf(s.slice(i))).toBeLessThanOrEqual(max);
        if (i > 0) {
          const prev = splitsSurrogatePair(s, i - 1) ? i - 2 : i - 1;
          expect(bytesOf(s.slice(prev))).toBeGreaterThan(max);
        }
      }),
      { seed: 3, numRuns: 3000 },
    );
  });

  it("knows where a pair would be split", () => {
    expect(splitsSurrogatePair("a😀b", 2)).toBe(true);
    expect(splitsSurrogatePair("a😀b", 1)).toBe(false);
    expect(splitsSurrogatePair("a😀b", 3)).toBe(false);
    expect(splitsSurrogatePair("\ude00\ud83d", 1)).toBe(false);
    expect(splitsSurrogatePair("😀", 0)).toBe(false);
    expect(splitsSurrogatePair("😀", 2)).toBe(false);
  });
});

describe("Utf8Segmenter", () => {
  function units(bytes: Uint8Array): [number, number][] {
    const out: [number, number][] = [];
    const seg = new Utf8Segmenter();
    for (const b of bytes) seg.feed(b, (i, o) => out.push([i, o]));
    seg.end((i, o) => out.push([i, o]));
    return out;
  }

  it("splits bytes into the characters TextDecoder produces", () => {
    expect(units(encode("aé€😀"))).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    // Broken "€", stray continuation, invalid lead, surrogate encoding, unfinished end.
    expect(units(Uint8Array.of(0xe2, 0x82, 0x41, 0x80, 0xff, 0xed, 0xa0, 0xf0, 0x9f))).toEqual([
      [2, 3],
      [1, 1],
      [1, 3],
      [1, 3],
      [1, 3],
      [1, 3],
      [2, 3],
    ]);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        const found = units(bytes);
        const chars = Array.from(decode(bytes));
        expect(found.length).toBe(chars.length);
        let at = 0;
        found.forEach(([inBytes, outBytes], k) => {
          expect(decode(bytes.subarray(at, at + inBytes))).toBe(chars[k]);
          expect(outBytes).toBe(bytesOf(chars[k]!));
          at += inBytes;
        });
        expect(at).toBe(bytes.length);
      }),
      { seed: 4, numRuns: 3000 },
    );
  });

  it("finds the longest run of valid characters that fits, for the fast path", () => {
    expect(validRunEnd(encode("aé€"), 0, 4)).toBe(3);
    expect(validRunEnd(encode("aé€"), 1, 5)).toBe(6);
    expect(validRunEnd(Uint8Array.of(0x61, 0xe2, 0x82), 0, 10)).toBe(1);
    const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), fc.nat(30), (bytes, max) => {
        const end = validRunEnd(bytes, 0, max);
        expect(end).toBeLessThanOrEqual(max);
        expect(() => strict.decode(bytes.subarray(0, end))).not.toThrow();
        // Maximal: the next unit is invalid, unfinished or does not fit.
        const next = units(bytes.subarray(end))[0];
        if (next) {
          let valid = true;
          try {
            strict.decode(bytes.subarray(end, end + next[0]));
          } catch {
            valid = false;
          }
          expect(valid && end + next[0] <= max).toBe(false);
        }
      }),
      { seed: 5, numRuns: 3000 },
    );
  });
});
