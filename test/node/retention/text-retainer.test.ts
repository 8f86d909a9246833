import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Omitted,
  TextRetainer,
  type TextRetainerOptions,
  type TextRetention,
} from "../../../src/core/retention/index.ts";
import { budgetOf, concat, decode, encode, expected, size } from "./reference.ts";

function retain(options: TextRetainerOptions, chunks: (string | Uint8Array)[]): TextRetention {
  const r = new TextRetainer(options);
  for (const c of chunks) r.push(c);
  return r.finish();
}

/** Compare a result with the reference for the concatenated input. */
function check(options: TextRetainerOptions, chunks: (string | Uint8Array)[]): void {
  const bytes = concat(chunks);
  const got = retain(options, chunks);
  const want = expected(options, bytes);
  expect({
    text: got.text,
    omittedByteCount: got.omittedByteCount,
    omittedAt: got.omittedAt,
  }).toEqual({
    omittedAt: undefined,
    ...want,
  });
  expect(got.totalBytes).toBe(bytes.length);
  expect(got.truncated).toBe(want.omittedByteCount > 0);
  // Without stopWhenFull everything is read, so the RFC's `omittedBytes` is exact; a head
  // that asked its producer to stop may claim only a lower bound.
  const n = want.omittedByteCount;
  const stops = options.kind === "head" && options.stop === "stopWhenFull";
  if (n === 0) expect(got.omittedBytes).toEqual(Omitted.none());
  else if (stops) expect([Omitted.exact(n), Omitted.atLeast(n)]).toContainEqual(got.omittedBytes);
  else expect(got.omittedBytes).toEqual(Omitted.exact(n));
  expect(size(got.text)).toBeLessThanOrEqual(budgetOf(options));
}

function kinds(budget: number): TextRetainerOptions[] {
  return [
    { kind: "head", maxBytes: budget },
    { kind: "tail", maxBytes: budget },
    { kind: "headTail", headBytes: budget, tailBytes: budget },
    { kind: "headTail", headBytes: budget, tailBytes: Math.max(0, budget - 3) },
  ];
}

/** Every way to cut `bytes` into two chunks, plus one byte at a time. */
function byteSplits(bytes: Uint8Array): Uint8Array[][] {
  const splits: Uint8Array[][] = [[bytes], Array.from(bytes, (b) => Uint8Array.of(b))];
  for (let i = 0; i <= bytes.length; i++) splits.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return splits;
}

describe("TextRetainer cuts at character boundaries", () => {
  // 1-, 2-, 3- and 4-byte characters in every order around the cuts.
  const samples = ["aé€😀b", "😀€éa", "éé", "€€€", "😀😀", "x😀y€zé"];

  it("cuts 2-, 3- and 4-byte characters at every offset, for strings and every byte split", () => {
    for (const sample of samples) {
      const bytes = encode(sample);
      for (let budget = 0; budget <= bytes.length + 1; budget++) {
        for (const options of kinds(budget)) {
          check(options, [sample]);
          // Strings split between code points.
          const chars = Array.from(sample);
          for (let i = 0; i <= chars.length; i++) {
            check(options, [chars.slice(0, i).join(""), chars.slice(i).join("")]);
          }
          for (const split of byteSplits(bytes)) check(options, split);
        }
      }
    }
  });

  it("drops a character cut in two and counts all its bytes as omitted", () => {
    expect(retain({ kind: "head", maxBytes: 3 }, ["a€"])).toMatchObject({
      text: "a",
      omittedByteCount: 3,
    });
    expect(retain({ kind: "head", maxBytes: 4 }, ["a😀"])).toMatchObject({
      text: "a",
      omittedByteCount: 4,
    });
    expect(retain({ kind: "tail", maxBytes: 2 }, ["éa"])).toMatchObject({
      text: "a",
      omittedByteCount: 2,
    });
    expect(retain({ kind: "tail", maxBytes: 3 }, ["😀a"])).toMatchObject({
      text: "a",
      omittedByteCount: 4,
    });
    expect(retain({ kind: "headTail", headBytes: 2, tailBytes: 2 }, ["a€€b"])).toMatchObject({
      text: "ab",
      omittedByteCount: 6,
      omittedAt: 1,
    });
  });

  it("keeps exactly-at-budget text whole and untruncated", () => {
    for (const options of kinds(9)) {
      if (options.kind === "headTail" && options.tailBytes < 9) continue;
      expect(retain(options, ["é€😀"])).toEqual({
        text: "é€😀",
        truncated: false,
        omittedByteCount: 0,
        omittedBytes: Omitted.none(),
        totalBytes: 9,
      });
    }
    expect(retain({ kind: "head", maxBytes: 8 }, ["é€😀"])).toMatchObject({
      text: "é€",
      truncated: true,
    });
    expect(retain({ kind: "headTail", headBytes: 5, tailBytes: 4 }, ["é€😀"]).truncated).toBe(
      false,
    );
    expect(retain({ kind: "headTail", headBytes: 5, tailBytes: 3 }, ["é€😀"])).toMatchObject({
      text: "é€",
      omittedByteCount: 4,
    });
  });
});

describe("TextRetainer with invalid UTF-8", () => {
  const invalid = [
    Uint8Array.of(0xff, 0x61),
    Uint8Array.of(0x80, 0x80, 0x41),
    Uint8Array.of(0x61, 0xe2, 0x82),
    Uint8Array.of(0xe2, 0x82, 0x41, 0xbf),
    Uint8Array.of(0xed, 0xa0, 0x80, 0x62),
    Uint8Array.of(0xe0, 0x80, 0xf4, 0x90, 0x80, 0x80),
    Uint8Array.of(0xc0, 0xc1, 0xf5, 0xfe, 0x41, 0xf0, 0x9f, 0x98),
    Uint8Array.of(0xf0, 0x9f, 0x98, 0x80, 0x9f, 0x98, 0x80),
  ];

  it("matches TextDecoder and never inflates past the budget, for every split", () => {
    for (const bytes of invalid) {
      for (let budget = 0; budget <= 3 * bytes.length + 1; budget++) {
        for (const options of kinds(budget))
          for (const split of byteSplits(bytes)) check(options, split);
      }
    }
  });

  it("measures an invalid byte as the 3 bytes of U+FFFD", () => {
    expect(retain({ kind: "head", maxBytes: 3 }, [Uint8Array.of(0xff, 0x61)])).toMatchObject({
      text: "\uFFFD",
      omittedByteCount: 1,
    });
    expect(retain({ kind: "head", maxBytes: 2 }, [Uint8Array.of(0xff, 0x61)])).toMatchObject({
      text: "",
      omittedByteCount: 2,
    });
    expect(retain({ kind: "tail", maxBytes: 4 }, [Uint8Array.of(0x80, 0x80, 0x41)])).toMatchObject({
      text: "\uFFFDA",
      omittedByteCount: 1,
    });
  });

  it("decodes an unfinished sequence at the end as U+FFFD when nothing is cut", () => {
    expect(retain({ kind: "head", maxBytes: 10 }, [Uint8Array.of(0x61, 0xe2, 0x82)])).toMatchObject(
      {
        text: "a\uFFFD",
        truncated: false,
        omittedByteCount: 0,
      },
    );
    expect(
      retain({ kind: "tail", maxBytes: 10 }, [Uint8Array.of(0x61, 0xe2), Uint8Array.of(0x82)]),
    ).toMatchObject({
      text: "a\uFFFD",
      truncated: false,
    });
  });

  it("keeps a byte order mark as text", () => {
    expect(
      retain({ kind: "head", maxBytes: 10 }, [Uint8Array.of(0xef, 0xbb, 0xbf, 0x61)]).text,
    ).toBe("\uFEFFa");
    expect(
      retain({ kind: "tail", maxBytes: 4 }, ["x", Uint8Array.of(0xef, 0xbb, 0xbf, 0x61)]).text,
    ).toBe("\uFEFFa");
  });

  it("treats lone surrogates in strings as U+FFFD, 3 bytes each", () => {
    expect(retain({ kind: "head", maxBytes: 4 }, ["\ud800a\udc00"])).toMatchObject({
      text: "\uFFFDa",
      omittedByteCount: 3,
    });
    // A pair split across two string pushes is two lone surrogates.
    expect(retain({ kind: "tail", maxBytes: 10 }, ["\ud83d", "\ude00"]).text).toBe("\uFFFD\uFFFD");
  });
});

describe("TextRetainer budgets", () => {
  it("works with zero budgets", () => {
    for (const options of kinds(0)) {
      expect(retain(options, [])).toMatchObject({
        text: "",
        truncated: false,
        omittedByteCount: 0,
      });
      expect(retain(options, ["abc"])).toMatchObject({
        text: "",
        truncated: true,
        omittedByteCount: 3,
      });
    }
    expect(retain({ kind: "headTail", headBytes: 0, tailBytes: 2 }, ["abc"])).toMatchObject({
      text: "bc",
      omittedAt: 0,
    });
    expect(retain({ kind: "headTail", headBytes: 2, tailBytes: 0 }, ["abc"])).toMatchObject({
      text: "ab",
      omittedAt: 2,
    });
  });

  it("refuses budgets that are not non-negative integers, naming the option and value", () => {
    const bad: unknown[] = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "10", undefined, null];
    for (const value of bad) {
      const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
      const message = (option: string) =>
        `TextRetainer: ${option} must be a non-negative integer (0 keeps nothing), got ${shown}.`;
      expect(() => new TextRetainer({ kind: "head", maxBytes: value } as never)).toThrow(
        new RangeError(message("maxBytes")),
      );
      expect(() => new TextRetainer({ kind: "tail", maxBytes: value } as never)).toThrow(
        message("maxBytes"),
      );
      expect(
        () => new TextRetainer({ kind: "headTail", headBytes: value, tailBytes: 1 } as never),
      ).toThrow(message("headBytes"));
      expect(
        () => new TextRetainer({ kind: "headTail", headBytes: 1, tailBytes: value } as never),
      ).toThrow(message("tailBytes"));
    }
    expect(() => new TextRetainer({ kind: "middle", maxBytes: 1 } as never)).toThrow(
      /kind must be "head", "tail" or "headTail", got "middle"/,
    );
    expect(() => new TextRetainer({ kind: "head", maxBytes: 1, stop: "never" } as never)).toThrow(
      /stop must be "stopWhenFull" or "readToEnd", got "never"/,
    );
  });

  it("refuses chunks that are neither strings nor bytes, and keeps its state", () => {
    const r = new TextRetainer({ kind: "tail", maxBytes: 8 });
    r.push("ok");
    expect(() => r.push(new ArrayBuffer(4) as never)).toThrow(
      new TypeError(
        "TextRetainer: push() takes a string or a Uint8Array, got [object ArrayBuffer].",
      ),
    );
    expect(() => r.push(42 as never)).toThrow(/got number/);
    expect(() => r.push(null as never)).toThrow(/got null/);
    expect(r.finish()).toMatchObject({ text: "ok", totalBytes: 2, truncated: false });
  });

  it("refuses pushes after finish() and returns the same result again", () => {
    const r = new TextRetainer({ kind: "tail", maxBytes: 2 });
    r.push("abc");
    expect(r.finish()).toBe(r.finish());
    expect(() => r.push("d")).toThrow(/push\(\) after finish\(\)/);
  });
});

describe("TextRetainer head with stopWhenFull", () => {
  it("asks to stop only once the budget is proven exceeded", () => {
    const r = new TextRetainer({ kind: "head", maxBytes: 3, stop: "stopWhenFull" });
    expect(r.push("abc").shouldStop).toBe(false);
    expect(r.push("d").shouldStop).toBe(true);
    expect(r.finish()).toMatchObject({
      text: "abc",
      truncated: true,
      omittedBytes: Omitted.atLeast(1),
    });
  });

  it("does not stop or truncate at exactly the budget", () => {
    const r = new TextRetainer({ kind: "head", maxBytes: 3, stop: "stopWhenFull" });
    expect(r.push("ab").shouldStop).toBe(false);
    expect(r.push("c").shouldStop).toBe(false);
    expect(r.finish()).toMatchObject({
      text: "abc",
      truncated: false,
      omittedBytes: Omitted.none(),
    });
  });

  it("stops on the lead byte of a character that cannot fit, before it completes", () => {
    const r = new TextRetainer({ kind: "head", maxBytes: 4, stop: "stopWhenFull" });
    r.push("abc");
    expect(r.push(Uint8Array.of(0xe2)).shouldStop).toBe(true);
    expect(r.finish()).toMatchObject({ text: "abc", omittedByteCount: 1 });
  });

  it("waits for a 2-byte character that may still fit", () => {
    const r = new TextRetainer({ kind: "head", maxBytes: 5, stop: "stopWhenFull" });
    r.push("abc");
    expect(r.push(Uint8Array.of(0xc3)).shouldStop).toBe(false);
    expect(r.push(Uint8Array.of(0xa9)).shouldStop).toBe(false);
    expect(r.finish()).toMatchObject({ text: "abcé", truncated: false });
  });

  it("reports an exact count when the input ended without a request to stop", () => {
    const r = new TextRetainer({ kind: "head", maxBytes: 4, stop: "stopWhenFull" });
    expect(r.push(Uint8Array.of(0x61, 0x62, 0xc3)).shouldStop).toBe(false);
    // The unfinished "é" at the end is U+FFFD: 3 bytes, no longer fits.
    expect(r.finish()).toMatchObject({
      text: "ab",
      truncated: true,
      omittedBytes: Omitted.exact(1),
    });
  });

  it("never asks a readToEnd head or a tail to stop, and counts exactly", () => {
    const head = new TextRetainer({ kind: "head", maxBytes: 1 });
    const tail = new TextRetainer({ kind: "tail", maxBytes: 1 });
    for (const r of [head, tail]) {
      expect(r.push("abc").shouldStop).toBe(false);
      expect(r.finish().omittedBytes).toEqual(Omitted.exact(2));
    }
  });
});

/** Bytes that are mostly UTF-8 with invalid bytes and broken sequences mixed in. */
const messyBytes = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 6 }).map(encode),
      fc.uint8Array({ maxLength: 4 }),
      fc.constantFrom(
        Uint8Array.of(0xe2, 0x82),
        Uint8Array.of(0xf0, 0x9f),
        Uint8Array.of(0xc3),
        Uint8Array.of(0xef, 0xbb, 0xbf),
        Uint8Array.of(0xed, 0xa0, 0x80),
      ),
    ),
    { maxLength: 12 },
  )
  .map((parts) => concat(parts));

/** Cut points for a byte array, as sorted offsets. */
function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    chunks.push(bytes.subarray(at, p));
    at = p;
  }
  chunks.push(bytes.subarray(at));
  return chunks;
}

const optionsArb: fc.Arbitrary<TextRetainerOptions> = fc.oneof(
  fc.record({ kind: fc.constant("head" as const), maxBytes: fc.nat(40) }),
  fc.record({
    kind: fc.constant("head" as const),
    maxBytes: fc.nat(40),
    stop: fc.constantFrom("stopWhenFull" as const, "readToEnd" as const),
  }),
  fc.record({ kind: fc.constant("tail" as const), maxBytes: fc.nat(40) }),
  fc.record({
    kind: fc.constant("headTail" as const),
    headBytes: fc.nat(20),
    tailBytes: fc.nat(20),
  }),
);

describe("TextRetainer properties", () => {
  it("equals the reference and fits the budget for any bytes split anywhere", () => {
    fc.assert(
      fc.property(
        optionsArb,
        messyBytes,
        fc.array(fc.nat(), { maxLength: 6 }),
        (options, bytes, cuts) => {
          check(options, chunked(bytes, cuts));
        },
      ),
      { seed: 11, numRuns: 4000 },
    );
  });

  it("gives the same result for strings, their bytes and any mix of the two", () => {
    const piece = fc.oneof(
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.string({
        unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)),
        maxLength: 8,
      }),
      fc.string({ unit: "grapheme-ascii", minLength: 40, maxLength: 200 }),
    );
    fc.assert(
      fc.property(
        optionsArb,
        fc.array(fc.tuple(piece, fc.boolean()), { maxLength: 8 }),
        (options, pieces) => {
          const chunks = pieces.map(([s, asBytes]) => (asBytes ? encode(s) : s));
          check(options, chunks);
          expect(retain(options, chunks)).toEqual(retain(options, [concat(chunks)]));
        },
      ),
      { seed: 12, numRuns: 3000 },
    );
  });
});

describe("TextRetainer memory", () => {
  const MiB = 1024 * 1024;
  // 64 KiB of mixed-width text; chunk boundaries fall inside characters.
  const chunk = encode("line 😀 é € ".repeat(4096)).subarray(0, 64 * 1024);
  const total = 50 * MiB;

  /** Feeds 50 MiB and returns the most memory the retainer held at any point. */
  function feedMany(r: TextRetainer): number {
    let peak = 0;
    for (let fed = 0; fed < total; fed += chunk.length) {
      r.push(chunk);
      peak = Math.max(peak, r.allocatedBytes);
    }
    return peak;
  }

  function lastBytes(n: number): Uint8Array {
    // The stream is the chunk repeated, so its end is the end of two chunks in a row.
    return concat([chunk, chunk]).subarray(2 * chunk.length - n);
  }

  it("keeps a 50 KiB tail of 50 MiB in a buffer bounded by the budget", () => {
    const maxBytes = 50 * 1024;
    const r = new TextRetainer({ kind: "tail", maxBytes });
    expect(feedMany(r)).toBeLessThanOrEqual(maxBytes + 3);
    const got = r.finish();
    const want = expected({ kind: "tail", maxBytes }, lastBytes(maxBytes + 8));
    expect(got.text).toBe(want.text);
    expect(got.totalBytes).toBe(total);
    expect(got.omittedByteCount).toBe(total - size(got.text));
  });

  it("keeps a head and a head+tail of 50 MiB in buffers bounded by their budgets", () => {
    const head = new TextRetainer({ kind: "head", maxBytes: 50 * 1024 });
    expect(feedMany(head)).toBeLessThanOrEqual(50 * 1024 + 4);
    expect(head.finish().text).toBe(
      expected({ kind: "head", maxBytes: 50 * 1024 }, chunk.subarray(0, 50 * 1024 + 8)).text,
    );

    const both = new TextRetainer({ kind: "headTail", headBytes: 20 * 1024, tailBytes: 30 * 1024 });
    expect(feedMany(both)).toBeLessThanOrEqual(50 * 1024 + 7);
    const got = both.finish();
    expect(got.totalBytes).toBe(total);
    expect(size(got.text)).toBeLessThanOrEqual(50 * 1024);
    expect(got.text.slice(got.omittedAt)).toBe(
      expected({ kind: "tail", maxBytes: 30 * 1024 }, lastBytes(30 * 1024 + 8)).text,
    );
  });

  it("encodes only the end of a huge string pushed into a tail", () => {
    const r = new TextRetainer({ kind: "tail", maxBytes: 1024 });
    const s = "é".repeat(5 * MiB);
    r.push(s);
    expect(r.allocatedBytes).toBeLessThanOrEqual(1024 + 3);
    expect(r.finish()).toMatchObject({
      text: "é".repeat(512),
      totalBytes: 10 * MiB,
      omittedByteCount: 10 * MiB - 1024,
    });
    expect(decode(encode(r.finish().text))).toBe(r.finish().text);
  });
});
