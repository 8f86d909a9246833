import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TerminalFilter } from "../../../src/client/cli/terminal-filter.ts";

const ESC = "\u001b";

function whole(text: string): string {
  const filter = new TerminalFilter();
  return filter.push(text) + filter.end();
}

describe("TerminalFilter", () => {
  it("passes colours and attributes (SGR), tab, newline, carriage return and backspace", () => {
    const text = `${ESC}[1;31mred${ESC}[0m\tcol\r\n${ESC}[38;5;208m${ESC}[38:2::1:2:3mx\b${ESC}[m\n`;
    expect(whole(text)).toBe(text);
  });

  it("shows OSC 52 (clipboard), OSC 0 (title), ESC[6n (status report) and ESC c (reset) as text", () => {
    const attacks: [string, string][] = [
      [`${ESC}]52;c;aGVsbG8=\u0007`, "␛]52;c;aGVsbG8=␇"],
      [`${ESC}]52;c;aGVsbG8=${ESC}\\`, "␛]52;c;aGVsbG8=␛\\"],
      [`${ESC}]0;pwned\u0007`, "␛]0;pwned␇"],
      [`${ESC}[6n`, "␛[6n"],
      [`${ESC}c`, "␛c"],
      [`${ESC}[2J${ESC}[H`, "␛[2J␛[H"],
      ["\u009b6n", "<U+009B>6n"],
      ["\u0000\u0007\u007f", "␀␇␡"],
    ];
    for (const [attack, shown] of attacks) {
      expect(whole(`a${attack}b`)).toBe(`a${shown}b`);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
      expect(whole(`a${attack}b`)).not.toMatch(/[\u0000-\u0007\u000e-\u001f\u007f-\u009f]/);
    }
  });

  it("holds back an SGR cut between chunks, and lets nothing else through at any cut", () => {
    const filter = new TerminalFilter();
    expect(filter.push(`x${ESC}[3`)).toBe("x");
    expect(filter.push("1mred")).toBe(`${ESC}[31mred`);
    expect(filter.push(`${ESC}`)).toBe("");
    expect(filter.push("[6n")).toBe("␛[6n");
    expect(filter.push(`${ESC}[`)).toBe("");
    expect(filter.end()).toBe("␛[");
  });

  it("gives the same text however the stream is cut, and never an escape that is not SGR (property)", () => {
    const piece = fc.constantFrom(
      "a",
      "\n",
      ESC,
      "[",
      "]",
      "6",
      "n",
      "m",
      ";",
      "3",
      "1",
      "\u0007",
      "c",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(40)), (parts, cuts) => {
        const text = parts.join("");
        const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const filter = new TerminalFilter();
        let out = "";
        let from = 0;
        for (const cut of at) {
          out += filter.push(text.slice(from, cut));
          from = cut;
        }
        out += filter.push(text.slice(from)) + filter.end();
        expect(out).toBe(whole(text));
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
        expect(out.replace(/\u001b\[[0-9;:]*m/g, "")).not.toContain(ESC);
      }),
    );
  });
});
