// The splitter under ripgrep's output (decision 244) against a reference split of the
// whole stream, for random streams cut into random chunks and random caps.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecordSplitter, type SplitRecord } from "../../../../sandbox/files/record-splitter.ts";

/** The reference: split the whole stream at once, keep each record's head. */
function reference(stream: Buffer, sep: number, max: number): { head: number[]; bytes: number }[] {
  const out: { head: number[]; bytes: number }[] = [];
  let start = 0;
  for (let i = 0; i <= stream.length; i++) {
    if (i === stream.length ? i > start : stream[i] === sep) {
      out.push({ head: [...stream.subarray(start, Math.min(i, start + max))], bytes: i - start });
      start = i + 1;
    }
  }
  return out;
}

describe("RecordSplitter", () => {
  it("gives every record's head and length, whatever the chunks", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a.map((b) => b % 4))),
        fc.array(fc.nat(40), { maxLength: 20 }),
        fc.integer({ min: 0, max: 50 }),
        (stream, cuts, max) => {
          const got: { head: number[]; bytes: number }[] = [];
          const split = new RecordSplitter(0, max, (r: SplitRecord) => {
            got.push({ head: [...r.head], bytes: r.bytes });
            return true;
          });
          let at = 0;
          for (const cut of cuts) {
            split.push(stream.subarray(at, at + cut));
            at += cut;
          }
          split.push(stream.subarray(at));
          split.end();
          expect(got).toEqual(reference(stream, 0, max));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("stops at the record that says stop, and ignores the rest", () => {
    const got: string[] = [];
    const split = new RecordSplitter(0x0a, 100, (r) => {
      got.push(r.head.toString());
      return got.length < 2;
    });
    expect(split.push(Buffer.from("one\ntwo\nthree\n"))).toBe(false);
    split.end();
    expect(got).toEqual(["one", "two"]);
  });

  it("holds a record at its cap: at, under and over it", () => {
    const heads = (text: string) => {
      const out: SplitRecord[] = [];
      const split = new RecordSplitter(0x0a, 4, (r) => out.push(r) > 0);
      split.push(Buffer.from(text));
      split.end();
      return out.map((r) => [r.head.toString(), r.bytes]);
    };
    expect(heads("abc\nabcd\nabcde\n")).toEqual([
      ["abc", 3],
      ["abcd", 4],
      ["abcd", 5],
    ]);
  });
});
