import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { plainTerminalText } from "../../../src/core/output/index.ts";

describe("plainTerminalText: a terminal's output as plain lines", () => {
  it("removes colours, cursor moves, titles and charsets, and turns CRLF into LF", () => {
    expect(plainTerminalText("\u001b[1;31mfail\u001b[0m ok\r\n")).toBe("fail ok\n");
    expect(plainTerminalText("\u001b]0;title\u0007$ ls\r\n")).toBe("$ ls\n");
    expect(plainTerminalText("\u001b(B\u001b[?2004hName? ")).toBe("Name? ");
  });

  it("a carriage return starts the line over and a backspace takes a character back", () => {
    expect(plainTerminalText("50%\r100%\r\n")).toBe("100%\n");
    expect(plainTerminalText("abcd\rxy\n")).toBe("xycd\n");
    expect(plainTerminalText("ab\b\bX\n")).toBe("Xb\n");
  });

  it("leaves no escape or control character but LF and tab, and plain text as it is", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: checking for controls
        expect(plainTerminalText(text)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
      }),
      { seed: 26, numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[ -~\n\t]{0,200}$/), (text) => {
        expect(plainTerminalText(text)).toBe(text);
      }),
      { seed: 27, numRuns: 1000 },
    );
  });
});
