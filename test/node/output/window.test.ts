import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { OutputPolicy } from "../../../src/core/output/types.ts";
import { countLines, TextWindow } from "../../../src/core/output/window.ts";
import { referenceWindow } from "./window-reference.ts";

const tail = (maxBytes: number, maxLines: number): OutputPolicy => ({
  retain: "tail",
  maxBytes,
  maxLines,
});
const head = (maxBytes: number, maxLines: number): OutputPolicy => ({
  retain: "head",
  maxBytes,
  maxLines,
});

/** Feeds chunks, checking each change against the previous text and the reference. */
function feed(policy: OutputPolicy, chunks: string[]): TextWindow {
  const w = new TextWindow(policy);
  let all = "";
  let shown = "";
  for (const c of chunks) {
    const change = w.append(c);
    all += c;
    if (policy.retain === "head") expect(change.drop).toBe(0);
    shown = shown.slice(change.drop) + change.append;
    const ref = referenceWindow(all, policy);
    expect(shown).toBe(ref.text);
    expect(w.text).toBe(ref.text);
    expect(w.truncation()).toEqual(ref.truncation);
  }
  return w;
}

describe("countLines", () => {
  it("counts a final run without newline as a line, and \\r as content", () => {
    expect([countLines(""), countLines("a"), countLines("a\n"), countLines("a\nb")]).toEqual([
      0, 1, 1, 2,
    ]);
    expect(countLines("\n\n")).toBe(2);
    expect(countLines("a\r\nb\r\n")).toBe(2);
    expect(countLines("a\rb")).toBe(1);
  });
});

describe("TextWindow tail", () => {
  it("slides by whole lines when over maxLines", () => {
    const w = new TextWindow(tail(100, 2));
    expect(w.append("one\ntwo\n")).toEqual({ drop: 0, append: "one\ntwo\n" });
    expect(w.append("six\n")).toEqual({ drop: 4, append: "six\n" });
    expect(w.text).toBe("two\nsix\n");
    expect(w.truncation()).toMatchObject({
      truncated: true,
      truncatedBy: "lines",
      totalLines: 3,
      outputLines: 2,
      totalBytes: 12,
      outputBytes: 8,
    });
  });

  it("is not truncated at exactly maxLines and maxBytes, and is one byte over", () => {
    const at = feed(tail(8, 2), ["abc\n", "def\n"]);
    expect(at.truncation().truncated).toBe(false);
    const underBytes = feed(tail(9, 2), ["abc\n", "def\n"]);
    expect(underBytes.truncation().truncated).toBe(false);
    const overBytes = feed(tail(7, 2), ["abc\n", "def\n"]);
    expect(overBytes.text).toBe("def\n");
    expect(overBytes.truncation()).toMatchObject({ truncated: true, truncatedBy: "bytes" });
    const overLines = feed(tail(100, 2), ["abc\n", "def\n", "g"]);
    expect(overLines.text).toBe("def\ng");
    expect(overLines.truncation()).toMatchObject({ truncatedBy: "lines", outputLines: 2 });
    const underLines = feed(tail(100, 3), ["abc\n", "def\n", "g"]);
    expect(underLines.truncation().truncated).toBe(false);
  });

  it("keeps the last bytes of a last line longer than maxBytes", () => {
    const w = feed(tail(10, 5), ["x\n", "0123456789", "ABC"]);
    expect(w.text).toBe("3456789ABC");
    expect(w.truncation()).toMatchObject({
      truncated: true,
      truncatedBy: "bytes",
      lastLinePartial: true,
      outputLines: 1,
      totalLines: 2,
    });
    // A new line that fits ends the partial state: the window moves to a line start.
    feed(tail(10, 5), ["x\n", "0123456789", "ABC", "\nok"]);
    const after = new TextWindow(tail(10, 5));
    for (const c of ["x\n", "0123456789", "ABC", "\nok"]) after.append(c);
    expect(after.text).toBe("ok");
    expect(after.truncation().lastLinePartial).toBe(false);
  });

  it("never cuts inside a multibyte character or a surrogate pair", () => {
    const w = feed(tail(5, 9), ["😀😀"]);
    expect(w.text).toBe("😀");
    const e = feed(tail(5, 9), ["€€"]);
    expect(e.text).toBe("€");
  });

  it("holds back a lone high surrogate until its pair arrives", () => {
    const w = new TextWindow(tail(100, 10));
    expect(w.append("a\uD83D")).toEqual({ drop: 0, append: "a" });
    expect(w.truncation().totalBytes).toBe(4);
    expect(w.append("\uDE00")).toEqual({ drop: 0, append: "\uD83D\uDE00" });
    expect(w.truncation().totalBytes).toBe(5);
  });

  it("counts \\r\\n split across writes as one line break", () => {
    const w = feed(tail(100, 1), ["a\r", "\nb\r", "\n"]);
    expect(w.text).toBe("b\r\n");
    expect(w.truncation()).toMatchObject({ totalLines: 2, outputLines: 1 });
  });

  it("keeps the right text when most of a huge write is dropped", () => {
    const big = `${"é".repeat(100_000)}\n${"x".repeat(150_000)}`;
    const mid = feed(tail(1000, 3), ["start\n", big]);
    expect(mid.text).toBe("x".repeat(1000));
    const w = feed(tail(1000, 3), ["start\n", big, "\nend"]);
    expect(w.text).toBe("end");
    expect(w.truncation().totalBytes).toBe(6 + 200_001 + 150_000 + 4);
  });

  it("handles zero caps", () => {
    expect(feed(tail(0, 5), ["abc\n", "d"]).text).toBe("");
    expect(feed(tail(5, 0), ["abc\n", "d"]).truncation()).toMatchObject({
      truncatedBy: "lines",
      outputLines: 0,
    });
  });

  it("slide drops what the source dropped and keeps the totals", () => {
    const w = new TextWindow(tail(100, 100));
    w.append("one\ntwo\n");
    expect(w.slide(4, "six\n")).toEqual({ drop: 4, append: "six\n" });
    expect(w.text).toBe("two\nsix\n");
    expect(w.truncation()).toMatchObject({ totalLines: 3, outputLines: 2, outputBytes: 8 });
  });

  it("slide refuses a bad drop and changes nothing", () => {
    const w = new TextWindow(tail(100, 100));
    w.append("a😀b");
    expect(() => w.slide(2, "")).toThrow(/surrogate pair/);
    expect(() => w.slide(5, "")).toThrow(/0 to the retained length 4/);
    expect(() => w.slide(-1, "")).toThrow(RangeError);
    expect(w.text).toBe("a😀b");
  });

  it("replace starts over, totals included", () => {
    const w = new TextWindow(tail(100, 100));
    w.append("old text\n");
    expect(w.replace("new")).toEqual({ drop: 9, append: "new" });
    expect(w.truncation()).toMatchObject({ totalLines: 1, totalBytes: 3, truncated: false });
  });
});

describe("TextWindow head", () => {
  it("appends to the cap and then only counts", () => {
    const w = new TextWindow(head(5, 10));
    expect(w.append("abc")).toEqual({ drop: 0, append: "abc" });
    expect(w.append("defg")).toEqual({ drop: 0, append: "de" });
    expect(w.append("more\n")).toEqual({ drop: 0, append: "" });
    expect(w.truncation()).toMatchObject({
      truncated: true,
      truncatedBy: "bytes",
      totalBytes: 12,
      totalLines: 1,
      outputBytes: 5,
      lastLinePartial: true,
      firstLineExceedsLimit: true,
    });
  });

  it("stops after maxLines lines; exactly maxLines is not truncated", () => {
    const at = feed(head(100, 2), ["a\nb", "\n"]);
    expect(at.truncation().truncated).toBe(false);
    const over = feed(head(100, 2), ["a\nb", "\nc"]);
    expect(over.text).toBe("a\nb\n");
    expect(over.truncation()).toMatchObject({ truncatedBy: "lines", lastLinePartial: false });
    expect(feed(head(100, 3), ["a\nb", "\nc"]).truncation().truncated).toBe(false);
  });

  it("is exact at, under and over maxBytes", () => {
    expect(feed(head(4, 9), ["ab", "c\n"]).truncation().truncated).toBe(false);
    expect(feed(head(5, 9), ["ab", "c\n"]).truncation().truncated).toBe(false);
    const over = feed(head(3, 9), ["ab", "c\n"]);
    expect(over.text).toBe("abc");
    expect(over.truncation()).toMatchObject({ truncatedBy: "bytes", firstLineExceedsLimit: true });
  });
});

describe("TextWindow policy", () => {
  it("refuses a bad policy with a clear error", () => {
    expect(() => new TextWindow(tail(-1, 5))).toThrow(/maxBytes must be a non-negative integer/);
    expect(() => new TextWindow(tail(5, 1.5))).toThrow(/maxLines/);
    expect(() => new TextWindow({ retain: "middle", maxBytes: 1, maxLines: 1 } as never)).toThrow(
      /"head" or "tail"/,
    );
  });
});

/** Text built from pieces that stress lines, multibyte characters, pairs and "\r\n". */
const piece = fc.constantFrom(
  "a",
  "bc",
  "\n",
  "\r\n",
  "\r",
  "é",
  "€",
  "😀",
  "\uD83D",
  "\uDE00",
  "xyz\n",
);
const text = fc.array(piece, { maxLength: 40 }).map((p) => p.join(""));
/** Splits `s` at random code-unit offsets (so pairs and "\r\n" are split sometimes). */
const chunked = text.chain((s) =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, s.length - 1) }), { maxLength: 8 })
    .map((cuts) => {
      const at = [0, ...cuts.filter((c) => c < s.length).sort((a, b) => a - b), s.length];
      return at.slice(1).map((end, i) => s.slice(at[i], end));
    }),
);
const policy = fc.record({
  retain: fc.constantFrom("head" as const, "tail" as const),
  maxBytes: fc.integer({ min: 0, max: 24 }),
  maxLines: fc.integer({ min: 0, max: 6 }),
});

describe("TextWindow property", () => {
  it("matches the naive reference after every append, for any chunking", () => {
    fc.assert(
      fc.property(policy, chunked, (p, chunks) => {
        feed(p, chunks);
      }),
      { seed: 20261129, numRuns: 3000 },
    );
  });

  it("slide then append equals the window of the slid text with a fresh line start", () => {
    fc.assert(
      fc.property(chunked, fc.nat(), text, (chunks, d, more) => {
        const p = tail(1000, 1000);
        const w = new TextWindow(p);
        for (const c of chunks) w.append(c);
        const before = w.text;
        let drop = d % (before.length + 1);
        if (
          /[\uDC00-\uDFFF]/.test(before[drop] ?? "") &&
          /[\uD800-\uDBFF]/.test(before[drop - 1] ?? "")
        )
          drop--;
        const change = w.slide(drop, more);
        expect(before.slice(change.drop) + change.append).toBe(w.text);
        // A lone high surrogate held back at the end of the chunks joins the slid text.
        const held = /[\uD800-\uDBFF]$/.test(chunks.join("")) ? chunks.join("").slice(-1) : "";
        expect(w.text).toBe(referenceWindow(before.slice(drop) + held + more, p).text);
      }),
      { seed: 7, numRuns: 500 },
    );
  });
});
