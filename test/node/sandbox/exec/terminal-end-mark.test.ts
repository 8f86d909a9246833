import { describe, expect, it } from "vitest";
import { EndMarkScanner, newEndMark } from "../../../../sandbox/exec/terminal-end-mark.ts";

const mark = newEndMark();

/** Feeds `chunks` and answers the command's bytes and whether the end was seen. */
function scan(chunks: Buffer[]): { output: string; ended: boolean } {
  const scanner = new EndMarkScanner(mark);
  let output = "";
  let ended = false;
  for (const chunk of chunks) {
    const piece = scanner.push(chunk);
    output += piece.output.toString("latin1");
    ended = piece.ended;
  }
  return { output, ended };
}

describe("the end mark of a terminal's output", () => {
  it("is an OSC of ESC, BEL, digits, ] and ; only, new for each terminal", () => {
    const text = mark.toString("latin1");
    expect(text.startsWith("\x1b]7770;")).toBe(true);
    expect(text.endsWith("\x07")).toBe(true);
    expect(text.slice(7, -1)).toMatch(/^\d{24}$/);
    expect(newEndMark().equals(mark)).toBe(false);
  });

  it("is found and taken out wherever a read splits it", () => {
    const all = Buffer.concat([Buffer.from("last line\r\n"), mark]);
    for (let cut = 0; cut <= all.length; cut++) {
      const got = scan([all.subarray(0, cut), all.subarray(cut)]);
      expect(got).toEqual({ output: "last line\r\n", ended: true });
    }
    const byByte = scan([...all].map((b) => Buffer.from([b])));
    expect(byByte).toEqual({ output: "last line\r\n", ended: true });
  });

  it("holds back only what may start it, and gives it back when it does not go on", () => {
    const scanner = new EndMarkScanner(mark);
    const start = mark.subarray(0, 8);
    const held = scanner.push(Buffer.concat([Buffer.from("a"), start]));
    expect(held).toEqual({ output: Buffer.from("a"), ended: false });
    const given = scanner.push(Buffer.from("b"));
    expect(given.output.toString("latin1")).toBe(`${start.toString("latin1")}b`);
    // A title (another OSC) and a lone ESC at the end of a read pass through.
    const title = "\x1b]0;build\x07";
    expect(scan([Buffer.from(title)])).toEqual({ output: title, ended: false });
    expect(scan([Buffer.from("x\x1b"), Buffer.from("[0m")])).toEqual({
      output: "x\x1b[0m",
      ended: false,
    });
  });

  it("drops what comes after it (the terminal's echo while the shell exits)", () => {
    const got = scan([
      Buffer.concat([Buffer.from("out"), mark, Buffer.from("typed late")]),
      Buffer.from("more"),
    ]);
    expect(got).toEqual({ output: "out", ended: true });
  });
});
