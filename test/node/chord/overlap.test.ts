import { describe, expect, it } from "vitest";
import { apply, findOverlap, type JsonValue, track } from "../../../src/core/chord/index.ts";
import {
  LONG_HEAD,
  MAX_CANDIDATES,
  OVERLAP_WINDOW,
  type OverlapProbe,
} from "../../../src/core/chord/overlap.ts";

function probed(prev: string, next: string) {
  const probe: OverlapProbe = { candidates: 0 };
  return { overlap: findOverlap(prev, next, probe), candidates: probe.candidates };
}

describe("findOverlap", () => {
  it("finds short overlaps with the one-character probe", () => {
    expect(findOverlap("abcdefgh", "defghxyz")).toBe(5);
    expect(findOverlap("abc", "cde")).toBe(1);
  });

  it("finds long overlaps with the 64-character probe", () => {
    const prev = "x".repeat(10) + "0123456789".repeat(100);
    expect(findOverlap(prev, `${prev.slice(10)}tail`)).toBe(prev.length - 10);
  });

  it("returns 0 when nothing overlaps or a side is empty", () => {
    expect(findOverlap("abc", "xyz")).toBe(0);
    expect(findOverlap("", "abc")).toBe(0);
    expect(findOverlap("abc", "")).toBe(0);
  });

  it("returns the longest overlap, not the first hit", () => {
    expect(findOverlap("abab", "ababx")).toBe(4);
    expect(findOverlap("aXabab", "ababY")).toBe(4);
  });

  it("only accepts hits that verify exactly", () => {
    // The 64-character head occurs in prev, but prev does not end the way next starts.
    const prev = `${"a".repeat(LONG_HEAD)}Qbcd`;
    expect(findOverlap(prev, `${"a".repeat(LONG_HEAD)}Z`)).toBe(0);
    expect(findOverlap(prev, `${"a".repeat(LONG_HEAD)}Qbc`)).toBe(0);
    expect(findOverlap(prev, `${"a".repeat(LONG_HEAD)}Qbcd!`)).toBe(LONG_HEAD + 4);
  });

  it("scans only the last 65,536 code units of prev", () => {
    const unique = (n: number) =>
      Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + (i % 20000)) + (i % 7)).join(
        "",
      );
    const body = unique(40_000);
    const prev = `${body}${"-".repeat(OVERLAP_WINDOW)}`;
    const inside = prev.slice(prev.length - OVERLAP_WINDOW);
    expect(findOverlap(prev, `${inside}!`)).toBe(OVERLAP_WINDOW);
    const outside = prev.slice(prev.length - OVERLAP_WINDOW - 1);
    expect(findOverlap(prev, `${outside}!`)).toBe(0);
  });

  it("finds a rolling window over periodic text (a run of dots) with the tail probe", () => {
    const prev = ".".repeat(51_200);
    const next = `${prev.slice(32)}${"x".repeat(32)}`;
    expect(findOverlap(prev, next)).toBe(51_168);
    const t = track({ text: prev });
    t.flush();
    t.state.text = next;
    expect(t.flush()).toEqual([
      ["t", ["text"], 32],
      ["a", ["text"], "x".repeat(32)],
    ]);
  });

  it("stays bounded on a pathological repetitive string and falls back correctly", () => {
    const unit = `${"a".repeat(LONG_HEAD - 1)}b`;
    const prev = unit.repeat(3000);
    const next = `${"a".repeat(LONG_HEAD - 1)}c${"a".repeat(5000)}`;
    const { overlap, candidates } = probed(prev, next);
    expect(overlap).toBe(0);
    expect(candidates).toBeLessThanOrEqual(3 * MAX_CANDIDATES);

    const t = track({ text: prev });
    t.flush();
    t.state.text = next;
    const ops = t.flush();
    expect(ops).toEqual([["s", ["text"], next]]);
    expect(apply({ text: prev }, ops)).toEqual({ text: next });
  });

  it("bounds the work on a string of one repeated character", () => {
    const prev = "a".repeat(200_000);
    const next = `${"a".repeat(100)}b${"a".repeat(1000)}`;
    const { overlap, candidates } = probed(prev, next);
    expect(candidates).toBeLessThanOrEqual(3 * MAX_CANDIDATES);
    expect(overlap).toBeGreaterThan(0);
    expect(prev.endsWith(next.slice(0, overlap))).toBe(true);
    let doc: JsonValue = { text: prev };
    doc = apply(doc, [
      ["t", ["text"], prev.length - overlap],
      ["a", ["text"], next.slice(overlap)],
    ]);
    expect(doc).toEqual({ text: next });
  });
});

describe("probe limits", () => {
  /** 64 distinct characters, so the head occurs only where it was put. */
  const head = Array.from({ length: LONG_HEAD }, (_, i) => String.fromCharCode(0x100 + i)).join("");

  /** `decoys` copies of the head that fail verification, then the real overlap. */
  function withDecoys(decoys: number) {
    const prev = `${`${head}#`.repeat(decoys)}${head}T`;
    // next is longer than prev, so every decoy is a possible (longer) overlap.
    return { prev, next: `${head}T${"n".repeat(prev.length)}` };
  }

  it.each([
    [6, 7],
    [7, 8],
  ])("the head probe verifies %i decoys and finds the overlap at hit %i", (decoys, hits) => {
    const { prev, next } = withDecoys(decoys);
    expect(probed(prev, next)).toEqual({ overlap: LONG_HEAD + 1, candidates: hits });
  });

  it("past 8 hits the head probe gives up and the tail probe finds the overlap", () => {
    const { prev, next } = withDecoys(MAX_CANDIDATES);
    expect(probed(prev, next)).toEqual({ overlap: LONG_HEAD + 1, candidates: MAX_CANDIDATES + 1 });
  });

  it.each([LONG_HEAD - 1, LONG_HEAD, LONG_HEAD + 1])("finds an overlap of %i", (k) => {
    const text = Array.from({ length: 200 }, (_, i) => String.fromCharCode(0x400 + i)).join("");
    const prev = text.slice(0, 150);
    const next = `${prev.slice(prev.length - k)}!`;
    expect(findOverlap(prev, next)).toBe(k);
  });
});
