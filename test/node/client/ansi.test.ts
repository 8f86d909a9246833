import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAnsi, stripAnsi } from "../../../src/client/index.ts";

const E = "\u001b";
const plain = { fg: null, bg: null, bold: false };

describe("parseAnsi", () => {
  it("keeps SGR colours, bright colours, backgrounds, bold and reset", () => {
    const [line] = parseAnsi(
      `${E}[31mred${E}[0m ${E}[1;92mbright${E}[22m ${E}[44mbg${E}[49m${E}[39m end`,
    );
    expect(line).toEqual([
      { text: "red", style: { fg: 1, bg: null, bold: false } },
      { text: " ", style: plain },
      { text: "bright", style: { fg: 10, bg: null, bold: true } },
      { text: " ", style: { fg: 10, bg: null, bold: false } },
      { text: "bg", style: { fg: 10, bg: 4, bold: false } },
      { text: " end", style: plain },
    ]);
  });

  it("carries the style across lines and treats an empty SGR as reset", () => {
    const lines = parseAnsi(`${E}[33ma\nb${E}[mc`);
    expect(lines).toEqual([
      [{ text: "a", style: { fg: 3, bg: null, bold: false } }],
      [
        { text: "b", style: { fg: 3, bg: null, bold: false } },
        { text: "c", style: plain },
      ],
    ]);
  });

  it("strips other escape sequences: cursor moves, OSC titles and links, 256-colour arguments", () => {
    const text = `${E}[2K${E}[1A${E}]0;title\u0007a${E}]8;;http://x${E}\\b${E}[38;5;31mc${E}[48;2;1;2;3md${E}(B`;
    expect(stripAnsi(text)).toBe("abcd");
    // 38;5;31 must not be read as "31 = red".
    expect(parseAnsi(`${E}[38;5;31mc`)[0]?.[0]?.style).toEqual(plain);
  });

  it("drops control characters and an escape cut off at the end", () => {
    expect(stripAnsi(`a\u0007b\u0008c\u0000d${E}[3`)).toBe("abcd");
    expect(stripAnsi(`x${E}`)).toBe("x");
  });

  it("lets an unterminated sequence hide nothing but itself", () => {
    expect(stripAnsi(`before\n${E}]0;title no terminator\nline2\nline3`)).toBe(
      "before\n\nline2\nline3",
    );
    expect(stripAnsi(`a${E}Pq\nrest`)).toBe("a\nrest");
    expect(stripAnsi(`a${E}_app${E}^pm${E}Xsos\nrest`)).toBe("a\nrest");
    expect(stripAnsi(`a${E}[12\nrest`)).toBe("a\nrest");
    expect(stripAnsi(`a${E}(\nrest`)).toBe("a\nrest");
    // An OSC ends at BEL, ST (ESC \ or C1 0x9c), or before the next escape.
    expect(stripAnsi(`${E}]0;t\u009cx${E}]0;u${E}[31my`)).toBe("xy");
  });

  it("drops only a lone ESC when what follows cannot continue it", () => {
    expect(stripAnsi(`lone ${E} then text`)).toBe("lone  then text");
    expect(stripAnsi(`${E}\nnext`)).toBe("\nnext");
    expect(stripAnsi(`${E}é`)).toBe("é");
    // Two-character escapes (save cursor, keypad mode) are still removed whole.
    expect(stripAnsi(`a${E}7b${E}=c`)).toBe("abc");
  });

  it("lets a lone carriage return start the line over, like a terminal progress bar", () => {
    expect(stripAnsi("10%\r50%\r100%\ndone\r\n")).toBe("100%\ndone\n");
  });

  it("never lets markup through as anything but text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const out = stripAnsi(s);
        // No escape or C0/C1 control survives except newline and tab.
        expect([...out].filter((c) => isControl(c) && c !== "\n" && c !== "\t")).toEqual([]);
        // Printable text without escapes or carriage returns is kept exactly.
        if (![...s].some((c) => c === "\u001b" || c === "\u009b" || c === "\r")) {
          const printable = [...s].filter((c) => !isControl(c)).join("");
          expect([...out].filter((c) => !isControl(c)).join("")).toBe(printable);
        }
      }),
      { seed: 11, numRuns: 2000 },
    );
  });
});

/** Printable text and newlines: no escapes, no carriage returns, no other controls. */
const plainChar = fc
  .oneof(
    fc.constantFrom("\n", "\n", "\t", "ok", "waiting"),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  )
  .filter((c) => ![...c].some(isControl) || c === "\n" || c === "\t");
const plainText = fc.array(plainChar, { maxLength: 40 }).map((parts) => parts.join(""));
/** Escape sequences, complete or cut off at any point. */
const escapeFragment = fc.constantFrom(
  `${E}[31m`,
  `${E}[0m`,
  `${E}[2K`,
  `${E}]0;title${E}\\`,
  `${E}]0;title\u0007`,
  `${E}]8;;http://x`,
  `${E}]0;title no terminator`,
  `${E}Pq#0;2;0;0;0`,
  `${E}_apc`,
  `${E}^pm`,
  `${E}Xsos`,
  `${E}[`,
  `${E}[1;`,
  `${E}(`,
  `${E}(B`,
  `${E}7`,
  `${E}`,
  "\u009b31m",
  "\u009b1;",
);

describe("stripAnsi with hostile or broken escapes (property)", () => {
  it("keeps text without ESC exactly", () => {
    fc.assert(
      fc.property(plainText, (s) => {
        expect(stripAnsi(s)).toBe(s);
      }),
      { seed: 12, numRuns: 2000 },
    );
  });

  it("never removes a line that follows a newline, wherever fragments are inserted", () => {
    fc.assert(
      fc.property(
        plainText,
        fc.array(fc.tuple(fc.nat(), escapeFragment), { maxLength: 6 }),
        (s, inserts) => {
          // Fragments go at line ends (before a newline, or the very end): a CSI cut off
          // mid-line may legitimately take the next letter as its final byte.
          const ends = [...s.matchAll(/\n/g)].map((m) => m.index).concat(s.length);
          const at = new Map<number, string>();
          for (const [n, fragment] of inserts) {
            const end = ends[n % ends.length] as number;
            at.set(end, (at.get(end) ?? "") + fragment);
          }
          let hostile = "";
          for (let i = 0; i <= s.length; i++) hostile += (at.get(i) ?? "") + (s[i] ?? "");
          const expected = s.split("\n");
          const got = stripAnsi(hostile).split("\n");
          expect(got).toHaveLength(expected.length);
          for (let k = 1; k < expected.length; k++) expect(got[k]).toBe(expected[k]);
        },
      ),
      { seed: 13, numRuns: 2000 },
    );
  });
});

function isControl(c: string): boolean {
  const code = c.charCodeAt(0);
  return code < 0x20 || (code >= 0x7f && code < 0xa0);
}
