import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, decoder, encoder, type JsonValue, type Op } from "../../../src/core/chord/index.ts";
import {
  MAX_DETAILS_BYTES,
  MAX_IMAGE_BASE64,
  OutputLimitError,
  type OutputPolicy,
  ToolOutputSink,
  type Truncation,
} from "../../../src/core/output/index.ts";
import { utf8ByteLength } from "../../../src/core/retention/utf8.ts";
import { lines, referenceWindow } from "./window-reference.ts";

const TEXT = ["content", 0, "text"];
const onText = (op: Op): boolean => op[0] !== "r" && op[1][0] === "content";
const tail = (maxBytes: number, maxLines: number): OutputPolicy => ({
  retain: "tail",
  maxBytes,
  maxLines,
});
const img = (n = 8, mimeType = "image/png") => ({ data: "A".repeat(n), mimeType });

function fresh<D extends JsonValue = JsonValue>(policy?: OutputPolicy): ToolOutputSink<D> {
  const sink = new ToolOutputSink<D>(policy ? { policy } : {});
  sink.flush();
  return sink;
}

describe("ToolOutputSink: text", () => {
  it("starts as one empty text block, details {}, terminate false, as a base", () => {
    const sink = new ToolOutputSink();
    const ops = sink.flush();
    expect(ops).toHaveLength(1);
    expect(ops[0]?.[0]).toBe("r");
    const state = sink.snapshot();
    expect(state.content).toEqual([{ type: "text", text: "" }]);
    expect(state.details).toEqual({});
    expect(state.terminate).toBe(false);
    expect(state.truncation).toMatchObject({ maxBytes: 51200, maxLines: 2000, truncated: false });
  });

  it("flushes a write as one append and a sliding window as trim + append", () => {
    const sink = fresh(tail(8, 100));
    sink.write("abcdef");
    expect(sink.flush()).toEqual([
      ["a", TEXT, "abcdef"],
      ["s", ["truncation", "totalLines"], 1],
      ["s", ["truncation", "totalBytes"], 6],
      ["s", ["truncation", "outputLines"], 1],
      ["s", ["truncation", "outputBytes"], 6],
    ]);
    sink.write("\nxyz\n");
    const ops = sink.flush();
    expect(ops.filter(onText)).toEqual([
      ["t", TEXT, 6],
      ["a", TEXT, "xyz\n"],
    ]);
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "xyz\n" });
  });

  it("flushes a 50 KB tail window after a 32-char write as only t + a, even for periodic text", () => {
    for (const fill of ["0123456789abcdef\n", ".", "ab"]) {
      const sink = fresh(tail(51200, 1_000_000));
      sink.write(fill.repeat(Math.ceil(60_000 / fill.length)));
      sink.flush();
      const before = (sink.snapshot().content[0] as { text: string }).text;
      sink.write("Z".repeat(32));
      const textOps = sink.flush().filter(onText);
      expect(textOps.map((op) => op[0])).toEqual(["t", "a"]);
      expect(textOps[1]).toEqual(["a", TEXT, "Z".repeat(32)]);
      const after = (sink.snapshot().content[0] as { text: string }).text;
      expect(after).toBe(before.slice(textOps[0]?.[2] as number) + "Z".repeat(32));
      expect(utf8ByteLength(after)).toBeLessThanOrEqual(51200);
    }
  });

  it("collapses several writes between flushes into one trim and one append", () => {
    const sink = fresh(tail(10, 100));
    sink.write("0123456789");
    sink.flush();
    sink.write("ab");
    sink.write("cd");
    sink.write("ef");
    expect(sink.flush().filter(onText)).toEqual([
      ["t", TEXT, 6],
      ["a", TEXT, "abcdef"],
    ]);
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "6789abcdef" });
  });

  it("keeps exactly maxBytes and maxLines, and cuts one over", () => {
    const at = fresh(tail(6, 2));
    at.write("ab\ncd\n");
    expect(at.snapshot().truncation.truncated).toBe(false);
    const overBytes = fresh(tail(5, 2));
    overBytes.write("ab\ncd\n");
    expect(overBytes.snapshot().content[0]).toEqual({ type: "text", text: "cd\n" });
    expect(overBytes.snapshot().truncation.truncatedBy).toBe("bytes");
    const overLines = fresh(tail(100, 1));
    overLines.write("ab\ncd\n");
    expect(overLines.snapshot().truncation).toMatchObject({ truncatedBy: "lines", totalLines: 2 });
    const under = fresh(tail(7, 3));
    under.write("ab\ncd\n");
    expect(under.snapshot().truncation.truncated).toBe(false);
  });

  it("head mode appends to the cap and then only counts", () => {
    const sink = fresh({ retain: "head", maxBytes: 4, maxLines: 10 });
    sink.write("abc");
    sink.write("defg\n");
    const state = sink.snapshot();
    expect(state.content[0]).toEqual({ type: "text", text: "abcd" });
    expect(state.truncation).toMatchObject({ truncated: true, totalBytes: 8, outputBytes: 4 });
  });

  it("replace recovers trim + append when the new text continues the old, else sets", () => {
    const sink = fresh(tail(1000, 100));
    sink.write("abcdefgh");
    sink.flush();
    sink.replace("defghxyz");
    expect(sink.flush().filter(onText)).toEqual([
      ["t", TEXT, 3],
      ["a", TEXT, "xyz"],
    ]);
    sink.replace("something else");
    expect(sink.flush().filter(onText)).toEqual([["s", TEXT, "something else"]]);
    expect(sink.snapshot().truncation).toMatchObject({ totalBytes: 14, totalLines: 1 });
  });

  it("slide drops what the source dropped, and refuses a bad drop without change", () => {
    const sink = fresh(tail(1000, 100));
    sink.write("one\ntwo\n");
    sink.flush();
    sink.slide(4, "six\n");
    expect(sink.flush().filter(onText)).toEqual([
      ["t", TEXT, 4],
      ["a", TEXT, "six\n"],
    ]);
    expect(() => sink.slide(9, "")).toThrow(RangeError);
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "two\nsix\n" });
  });

  it("capture adopts the source's totals and spill path until the next capture", () => {
    const sink = fresh(tail(1000, 100));
    const meta: Truncation = {
      truncated: true,
      truncatedBy: "lines",
      totalLines: 34000,
      totalBytes: 2_000_000,
      outputLines: 1,
      outputBytes: 5,
      maxLines: 2000,
      maxBytes: 51200,
      lastLinePartial: false,
      firstLineExceedsLimit: false,
      spillPath: "/spill/a.log",
    };
    sink.replace("tail\n");
    sink.capture(meta);
    expect(sink.snapshot().truncation).toEqual(meta);
    sink.write("more\n");
    expect(sink.snapshot().truncation).toEqual(meta);
    expect(() => sink.capture({ ...meta, totalLines: -1 })).toThrow(/totalLines/);
    expect(sink.snapshot().truncation).toEqual(meta);
  });

  it("capture sends only the totals that moved, and a bad one changes nothing", () => {
    const sink = fresh(tail(1000, 100));
    const meta: Truncation = {
      truncated: true,
      truncatedBy: "bytes",
      totalLines: 10,
      totalBytes: 900,
      outputLines: 2,
      outputBytes: 100,
      maxLines: 2000,
      maxBytes: 51200,
      lastLinePartial: false,
      firstLineExceedsLimit: false,
      spillPath: "/spill/a.log",
    };
    sink.capture(meta);
    sink.replace("tail\n");
    sink.flush();
    sink.capture({ ...meta });
    expect(sink.flush()).toEqual([]);
    sink.capture({ ...meta, totalLines: 11, totalBytes: 932 });
    expect(sink.flush()).toEqual([
      ["s", ["truncation", "totalLines"], 11],
      ["s", ["truncation", "totalBytes"], 932],
    ]);
    // The first bad field in key order is named, even when an earlier field moved too.
    expect(() => sink.capture({ ...meta, totalLines: 12, outputBytes: 1.5, maxLines: -1 })).toThrow(
      /capture\(meta\)\.outputBytes must be a non-negative integer, got 1\.5/,
    );
    expect(sink.flush()).toEqual([]);
    expect(sink.truncation()).toEqual({ ...meta, totalLines: 11, totalBytes: 932 });
    const { spillPath: _, ...withoutSpill } = meta;
    sink.capture({ ...withoutSpill, totalLines: 11, totalBytes: 932 });
    expect(sink.flush()).toEqual([["d", ["truncation", "spillPath"]]]);
    expect(sink.truncation()).not.toHaveProperty("spillPath");
  });
});

describe("ToolOutputSink: text a source bounded (after capture)", () => {
  const meta: Truncation = {
    truncated: true,
    truncatedBy: "lines",
    totalLines: 9,
    totalBytes: 90,
    outputLines: 2,
    outputBytes: 8,
    maxLines: 2,
    maxBytes: 51200,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
  };

  it("takes the source's slide as sent, without cutting it again by lines", () => {
    const sink = fresh(tail(100, 2));
    sink.capture(meta);
    sink.replace("one\ntwo\n");
    sink.flush();
    // Three lines is over the sink's own 2-line window: a second window would cut "two\n".
    sink.slide(4, "six\nten\n");
    expect(sink.flush().filter(onText)).toEqual([
      ["t", TEXT, 4],
      ["a", TEXT, "six\nten\n"],
    ]);
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "two\nsix\nten\n" });
    expect(sink.snapshot().truncation).toEqual(meta);
  });

  it("refuses a change that leaves more UTF-16 units than maxBytes, changing nothing", () => {
    const sink = fresh(tail(10, 100));
    sink.capture(meta);
    sink.write("0123456789");
    const before = sink.snapshot();
    expect(() => sink.write("x")).toThrow(OutputLimitError);
    expect(() => sink.write("x")).toThrow(/11 UTF-16 units, more than this tool's 10-byte cap/);
    expect(() => sink.replace("0123456789x")).toThrow(OutputLimitError);
    expect(() => sink.slide(11, "")).toThrow(RangeError);
    expect(() => sink.slide(-1, "")).toThrow(RangeError);
    expect(sink.snapshot()).toEqual(before);
    sink.slide(1, "x");
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "123456789x" });
  });

  it("flushes a 32-character slide of a 50 KB periodic window as exactly t + a", () => {
    const sink = fresh({ retain: "tail", maxBytes: 53_248, maxLines: 2008 });
    sink.capture({ ...meta, maxBytes: 51_200 });
    sink.replace(".".repeat(51_200));
    sink.flush();
    for (let i = 0; i < 3; i++) {
      sink.slide(32, `${"x".repeat(31)}\n`);
      sink.capture({ ...meta, totalLines: 10 + i });
      expect(sink.flush()).toEqual([
        ["t", TEXT, 32],
        ["a", TEXT, `${"x".repeat(31)}\n`],
        ["s", ["truncation", "totalLines"], 10 + i],
      ]);
    }
  });
});

describe("ToolOutputSink: images, details, usage, flags", () => {
  it("accepts 8 images and refuses a 9th with the limit named", () => {
    const sink = fresh();
    for (let i = 0; i < 8; i++) sink.image(img());
    expect(() => sink.image(img())).toThrow(/at most 8 images; this would be image 9/);
    expect(sink.snapshot().content).toHaveLength(9);
  });

  it("accepts an image of exactly 1 MiB of base64 and refuses one more character", () => {
    const sink = fresh();
    sink.image(img(MAX_IMAGE_BASE64 - 1));
    sink.image(img(MAX_IMAGE_BASE64));
    expect(() => sink.image(img(MAX_IMAGE_BASE64 + 1))).toThrow(
      /at most 1048576 base64 characters \(1 MiB\); got 1048577/,
    );
    expect(sink.snapshot().content).toHaveLength(3);
  });

  it("refuses a non-image type and non-base64 data", () => {
    const sink = fresh();
    expect(() => sink.image(img(8, "text/plain"))).toThrow(/image type/);
    expect(() => sink.image({ data: "not base64!", mimeType: "image/png" })).toThrow(/base64/);
    expect(sink.snapshot().content).toHaveLength(1);
  });

  it("flushes an image as one splice after the text block", () => {
    const sink = fresh();
    sink.image(img(4));
    expect(sink.flush()).toEqual([
      ["p", ["content"], 1, 0, [{ type: "image", data: "AAAA", mimeType: "image/png" }]],
    ]);
  });

  it("accepts details of exactly 64 KiB serialized and rolls back one byte more", () => {
    const sink = fresh<{ x?: string; n?: number }>();
    const overhead = JSON.stringify({ x: "" }).length;
    sink.details.x = "a".repeat(MAX_DETAILS_BYTES - overhead - 1);
    sink.flush();
    sink.details.x = "a".repeat(MAX_DETAILS_BYTES - overhead);
    sink.flush();
    expect(sink.limitError).toBeNull();
    sink.details.x = "a".repeat(MAX_DETAILS_BYTES - overhead + 1);
    sink.write("partial\n");
    sink.flush();
    expect(sink.limitError).toBeInstanceOf(OutputLimitError);
    expect(sink.limitError?.message).toMatch(/65537 bytes serialized; the limit is 65536 bytes/);
    expect((sink.snapshot().details as { x: string }).x).toHaveLength(MAX_DETAILS_BYTES - overhead);
    expect(() => sink.write("more")).toThrow(OutputLimitError);
    sink.fail(sink.limitError);
    expect(sink.snapshot().content[0]).toMatchObject({ text: expect.stringMatching(/^partial\n/) });
  });

  it("measures details in UTF-8 bytes, not characters", () => {
    const sink = fresh<{ x?: string }>();
    sink.details.x = "é".repeat(MAX_DETAILS_BYTES / 2);
    sink.flush();
    expect(sink.limitError?.size).toBe(MAX_DETAILS_BYTES + 8);
  });

  it("accumulates usage field by field and refuses bad numbers without change", () => {
    const sink = fresh();
    sink.usage({ input: 10, cost: 0.5 });
    sink.usage({ input: 5, output: 2 });
    expect(sink.snapshot().usage).toEqual({ input: 15, output: 2, cost: 0.5 });
    expect(() => sink.usage({ input: 1, output: -1 })).toThrow(/usage.output must be/);
    expect(() => sink.usage({ input: Number.NaN })).toThrow(/usage.input/);
    expect(() => sink.usage({ input: Number.POSITIVE_INFINITY })).toThrow(/usage.input/);
    expect(sink.snapshot().usage).toEqual({ input: 15, output: 2, cost: 0.5 });
  });

  it("addTools and terminate replace", () => {
    const sink = fresh();
    sink.addTools(["a", "b"]);
    sink.addTools(["c"]);
    sink.terminate(true);
    sink.terminate(false);
    const state = sink.snapshot();
    expect(state.addedTools).toEqual(["c"]);
    expect(state.terminate).toBe(false);
    expect(() => sink.addTools([""])).toThrow(/non-empty/);
  });
});

describe("ToolOutputSink: host side", () => {
  it("fail appends the error to the partial output and closes the tool side", () => {
    const sink = fresh();
    sink.write("half done");
    sink.fail(new Error("exit code 2"));
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "half done\nexit code 2" });
    expect(() => sink.output.write("late")).toThrow(/closed \(the call failed\)/);
  });

  it("a notice is never cut by the window, and is bounded itself", () => {
    const sink = fresh({ retain: "head", maxBytes: 4, maxLines: 10 });
    sink.write("abcdefgh");
    sink.appendNotice("[Cancelled.]");
    expect(sink.snapshot().content[0]).toEqual({ type: "text", text: "abcd\n[Cancelled.]" });
    const big = fresh();
    big.appendNotice("x".repeat(10_000));
    expect(utf8ByteLength((big.snapshot().content[0] as { text: string }).text)).toBe(4096);
  });

  it("snapshot is a deep copy", () => {
    const sink = fresh<{ list?: number[] }>();
    sink.details.list = [1];
    const snap = sink.snapshot();
    (snap.details as { list: number[] }).list.push(2);
    expect(sink.snapshot().details).toEqual({ list: [1] });
  });

  it("seed starts from durable state: next flush a base, totals continue", () => {
    const first = fresh(tail(8, 100));
    first.write("aaaa\nbbbb\ncc");
    first.details;
    const durable = first.snapshot();
    const sink = new ToolOutputSink({ policy: tail(8, 100) });
    sink.seed(durable);
    const ops = sink.flush();
    expect(ops).toEqual([["r", durable]]);
    sink.write("\n");
    expect(sink.snapshot().truncation).toMatchObject({ totalLines: 3, totalBytes: 13 });
    expect(() => sink.seed({ ...durable, content: [] })).toThrow(/one text block/);
  });

  it("rebase makes exactly the next flush a base", () => {
    const sink = fresh();
    sink.rebase();
    expect(sink.flush()[0]?.[0]).toBe("r");
    sink.write("x");
    expect(sink.flush()[0]?.[0]).toBe("a");
  });

  it("calls onChange on every change", () => {
    let n = 0;
    const sink = new ToolOutputSink({ onChange: () => n++ });
    sink.write("a");
    sink.usage({ input: 1 });
    sink.terminate(true);
    expect(n).toBe(3);
  });
});

type Step =
  | { kind: "write"; text: string }
  | { kind: "replace"; text: string }
  | { kind: "slide"; drop: number; text: string }
  | { kind: "capture"; totalLines: number }
  | { kind: "image" }
  | { kind: "usage"; n: number }
  | { kind: "details"; n: number }
  | { kind: "flush" }
  | { kind: "rebase" };

const piece = fc.constantFrom("a", "bc", "\n", "\r\n", "é", "€", "😀", "xyz\n", "0123456789");
const text = fc.array(piece, { maxLength: 12 }).map((p) => p.join(""));
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: text.map((t) => ({ kind: "write" as const, text: t })) },
  { weight: 1, arbitrary: text.map((t) => ({ kind: "replace" as const, text: t })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.nat(), text)
      .map(([drop, t]) => ({ kind: "slide" as const, drop, text: t })),
  },
  {
    weight: 1,
    arbitrary: fc.nat(99).map((totalLines) => ({ kind: "capture" as const, totalLines })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "image" as const }) },
  { weight: 1, arbitrary: fc.nat(9).map((n) => ({ kind: "usage" as const, n })) },
  { weight: 1, arbitrary: fc.nat(9).map((n) => ({ kind: "details" as const, n })) },
  { weight: 4, arbitrary: fc.constant({ kind: "flush" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "rebase" as const }) },
);
const policy = fc.record({
  retain: fc.constantFrom("head" as const, "tail" as const),
  maxBytes: fc.integer({ min: 0, max: 40 }),
  maxLines: fc.integer({ min: 0, max: 5 }),
});

describe("ToolOutputSink property", () => {
  it("encoded flushes folded by a replica equal the snapshot, and the text obeys the window", () => {
    fc.assert(
      fc.property(policy, fc.array(step, { minLength: 1, maxLength: 60 }), (p, steps) => {
        const sink = new ToolOutputSink<{ n?: number }>({ policy: p });
        const enc = encoder();
        const dec = decoder();
        let replica: JsonValue = null;
        let images = 0;
        /** The whole text a window fed since the last replace would have seen, or null after a slide. */
        let fed: string | null = "";
        /** The source's totals once a capture made the source own the text's bounds. */
        let captured: Truncation | null = null;
        /** What the text must be after a source-owned change (it is taken as sent). */
        let mirrored: string | null = null;
        const sourceCall = (next: string, call: () => void) => {
          if (captured === null) return call();
          const before = sink.snapshot();
          if (next.length > p.maxBytes) {
            expect(call).toThrow(OutputLimitError);
            expect(sink.snapshot()).toEqual(before);
            mirrored = (before.content[0] as { text: string }).text;
          } else {
            call();
            mirrored = next;
          }
        };
        const currentText = () => (sink.snapshot().content[0] as { text: string }).text;
        for (const s of steps) {
          mirrored = null;
          if (s.kind === "write") {
            if (s.text === "") continue;
            if (captured === null) sink.write(s.text);
            else sourceCall(currentText() + s.text, () => sink.write(s.text));
            if (fed !== null) fed += s.text;
          } else if (s.kind === "replace") {
            sourceCall(s.text, () => sink.replace(s.text));
            fed = s.text;
          } else if (s.kind === "slide") {
            const current = currentText();
            let drop = s.drop % (current.length + 1);
            if (/[\uDC00-\uDFFF]/.test(current[drop] ?? "") && drop > 0) drop--;
            sourceCall(current.slice(drop) + s.text, () => sink.slide(drop, s.text));
            fed = null;
          } else if (s.kind === "capture") {
            captured = {
              ...sink.truncation(),
              totalLines: s.totalLines,
              spillPath: "/spill/x.log",
            };
            sink.capture(captured);
            fed = null;
          } else if (s.kind === "image") {
            if (images < 8) {
              sink.image({ data: "QUJD", mimeType: "image/png" });
              images++;
            }
          } else if (s.kind === "usage") sink.usage({ input: s.n });
          else if (s.kind === "details") sink.details.n = s.n;
          else if (s.kind === "rebase") sink.rebase();
          else {
            const wire = JSON.parse(JSON.stringify(enc.encode(sink.flush())));
            replica = apply(replica, dec.decode(wire));
            expect(replica).toEqual(sink.snapshot());
          }
          const state = sink.snapshot();
          const shown = (state.content[0] as { text: string }).text;
          if (captured !== null) {
            // The source owns the bounds: its text is taken as sent, its totals verbatim.
            if (mirrored !== null) expect(shown).toBe(mirrored);
            expect(shown.length).toBeLessThanOrEqual(p.maxBytes);
            expect(state.truncation).toEqual(captured);
            continue;
          }
          expect(utf8ByteLength(shown)).toBeLessThanOrEqual(p.maxBytes);
          expect(lines(shown)).toBeLessThanOrEqual(p.maxLines);
          if (fed !== null) {
            const ref = referenceWindow(fed, p);
            expect(shown).toBe(ref.text);
            expect(state.truncation).toEqual(ref.truncation);
          }
        }
        const wire = JSON.parse(JSON.stringify(enc.encode(sink.flush())));
        replica = apply(replica, dec.decode(wire));
        expect(replica).toEqual(sink.snapshot());
      }),
      { seed: 424242, numRuns: 1500 },
    );
  });
});
