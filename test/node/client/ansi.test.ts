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

function isControl(c: string): boolean {
  const code = c.charCodeAt(0);
  return code < 0x20 || (code >= 0x7f && code < 0xa0);
}
