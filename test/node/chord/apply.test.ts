import { describe, expect, it } from "vitest";
import {
  ApplyError,
  apply,
  assertValidOp,
  assertValidWireOp,
  ChordError,
  InvalidOpError,
  isBase,
  type JsonValue,
  type Op,
  UnsafePathError,
} from "../../../src/core/chord/index.ts";

describe("apply", () => {
  it("applies the seven verbs and returns the new value", () => {
    let doc: JsonValue = null;
    doc = apply(doc, [["r", { text: "abc", list: [1, 2], gone: true }]]);
    doc = apply(doc, [
      ["s", ["n"], 1],
      ["d", ["gone"]],
      ["a", ["text"], "def"],
      ["t", ["text"], 2],
      ["p", ["list"], 1, 1, [7, 8]],
      ["s", ["list", 3], 9],
    ]);
    expect(doc).toEqual({ text: "cdef", list: [1, 7, 8, 9], n: 1 });
    expect(apply([1, 2], [["p", [], 0, 1, []]])).toEqual([2]);
    doc = apply(doc, [["m", ["list"], [3, 0, 2, 1]]]);
    expect(doc).toEqual({ text: "cdef", list: [9, 1, 8, 7], n: 1 });
  });

  it("reorders so that new[i] = old[permutation[i]], at a path or at the root", () => {
    expect(apply(["a", "b", "c"], [["m", [], [2, 0, 1]]])).toEqual(["c", "a", "b"]);
    expect(apply({ xs: [{ k: 1 }, { k: 2 }] }, [["m", ["xs"], [1, 0]]])).toEqual({
      xs: [{ k: 2 }, { k: 1 }],
    });
    expect(apply([], [["m", [], []]])).toEqual([]);
    expect(
      apply({ xs: [{ k: 1 }, { k: 2 }] }, [
        ["m", ["xs"], [1, 0]],
        ["s", ["xs", 0, "k"], 5],
      ]),
    ).toEqual({ xs: [{ k: 5 }, { k: 1 }] });
  });

  it("refuses a reorder whose permutation does not match the array's length, or whose target is not an array", () => {
    expect(() => apply([1, 2, 3], [["m", [], [1, 0]]])).toThrow(
      /a permutation of 2 elements does not reorder target, an array of length 3/,
    );
    expect(() => apply([1], [["m", [], [1, 0]]])).toThrow(ApplyError);
    expect(() => apply({ xs: "ab" }, [["m", ["xs"], [1, 0]]])).toThrow(/not an array/);
    expect(() => apply({}, [["m", ["xs"], []]])).toThrow(/does not exist/);
  });

  it("undoes a reorder when a later op of the batch fails", () => {
    const doc: JsonValue = { xs: [1, 2, 3] };
    expect(() =>
      apply(doc, [
        ["m", ["xs"], [2, 1, 0]],
        ["m", ["xs"], [1, 0, 2]],
        ["s", ["missing", "x"], 1],
      ]),
    ).toThrow(ApplyError);
    expect(doc).toEqual({ xs: [1, 2, 3] });
  });

  it("copies payloads in", () => {
    const payload = { deep: [1] };
    const doc = apply({}, [["s", ["x"], payload]]) as { x: { deep: number[] } };
    payload.deep.push(2);
    expect(doc.x.deep).toEqual([1]);
  });

  it("follows own properties only", () => {
    expect(() => apply({}, [["a", ["toString"], "x"]])).toThrow(/does not exist/);
    const doc = apply({}, [["d", ["hasOwnProperty"]]]);
    expect(doc).toEqual({});
    expect(Object.hasOwn(Object.prototype, "hasOwnProperty")).toBe(true);
    expect(() => apply({}, [["s", ["valueOf", "x"], 1]])).toThrow(/does not exist/);
  });

  it("allows an array index up to the length and no further", () => {
    expect(apply([1], [["s", [1], 2]])).toEqual([1, 2]);
    expect(() => apply([1], [["s", [2], 2]])).toThrow(/past the end/);
    expect(apply([1], [["p", [], 1, 0, [2]]])).toEqual([1, 2]);
    expect(() => apply([1], [["p", [], 2, 0, [2]]])).toThrow(/length 1/);
    expect(() => apply([1], [["p", [], 0, 2, []]])).toThrow(ApplyError);
    expect(() => apply([1], [["d", [0]]])).toThrow(/remove it with "p"/);
  });

  it("checks that t drops at most the whole string, and a/t target strings", () => {
    expect(apply({ s: "ab" }, [["t", ["s"], 2]])).toEqual({ s: "" });
    expect(() => apply({ s: "ab" }, [["t", ["s"], 3]])).toThrow(/only 2/);
    expect(() => apply({ s: 1 }, [["a", ["s"], "x"]])).toThrow(/not a string/);
    expect(() => apply({ s: [] }, [["p", ["s", "x"], 0, 0, []]])).toThrow(/string/);
  });

  it("deletes an absent key as a no-op (the reference sends d for a key added and removed in one flush), but needs its parent", () => {
    expect(apply({ a: 1 }, [["d", ["b"]]])).toEqual({ a: 1 });
    expect(apply({ o: {} }, [["d", ["o", "k"]]])).toEqual({ o: {} });
    expect(() => apply({}, [["d", ["o", "k"]]])).toThrow(/target.o does not exist/);
    expect(() => apply({ o: 1 }, [["d", ["o", "k"]]])).toThrow(ApplyError);
  });

  it("writes keys that look like accessors as plain data", () => {
    const doc = apply({}, [["s", ["toString"], "x"]]) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(doc, "toString")).toEqual({
      value: "x",
      writable: true,
      enumerable: true,
      configurable: true,
    });
  });

  it("is all or nothing: a failing op undoes the batch", () => {
    const doc: JsonValue = { text: "abc", list: [1, 2, 3], o: { k: 1 } };
    const before = JSON.stringify(doc);
    const ops: Op[] = [
      ["a", ["text"], "d"],
      ["t", ["text"], 2],
      ["p", ["list"], 0, 2, [9]],
      ["d", ["o", "k"]],
      ["s", ["o", "new"], 1],
      ["s", ["list", 1], 0],
      ["s", ["missing", "x"], 1],
    ];
    expect(() => apply(doc, ops)).toThrow(ApplyError);
    expect(JSON.stringify(doc)).toBe(before);
  });

  it("refuses an r that is not first and invalid ops before changing anything", () => {
    const doc = { a: 1 };
    expect(() =>
      apply(doc, [
        ["s", ["a"], 2],
        ["r", {}],
      ]),
    ).toThrow(/only come first/);
    expect(() => apply(doc, [["s", ["a"], 2], ["x"] as unknown as Op])).toThrow(InvalidOpError);
    expect(doc).toEqual({ a: 1 });
  });

  it.each(["__proto__", "constructor", "prototype"])("refuses the segment %s", (seg) => {
    expect(() => apply({}, [["s", [seg, "polluted"], true]])).toThrow(UnsafePathError);
    expect(() => apply({}, [["m", [seg], []]])).toThrow(UnsafePathError);
    expect(() => apply({}, [["s", ["x"], JSON.parse(`{"${seg}": 1}`)]])).toThrow(UnsafePathError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("assertValidOp", () => {
  const bad: [string, unknown][] = [
    ["not an array", { op: "s" }],
    ["unknown verb", ["x", ["a"], 1]],
    ["too few elements", ["s", ["a"]]],
    ["too many elements", ["d", ["a"], 1]],
    ["string path", ["s", "a", 1]],
    ["empty path for s", ["s", [], 1]],
    ["empty path for a", ["a", [], "x"]],
    ["non-array splice items", ["p", ["a"], 0, 0, "x"]],
    ["negative splice index", ["p", ["a"], -1, 0, []]],
    ["negative remove count", ["p", ["a"], 0, -1, []]],
    ["negative trim", ["t", ["a"], -1]],
    ["fractional trim", ["t", ["a"], 1.5]],
    ["NaN trim", ["t", ["a"], Number.NaN]],
    ["non-string append", ["a", ["a"], 1]],
    ["negative index segment", ["s", [-1], 1]],
    ["fractional index segment", ["s", [0.5], 1]],
    ["object segment", ["s", [{}], 1]],
    ["non-JSON payload", ["s", ["a"], () => 1]],
    ["undefined payload", ["s", ["a"], undefined]],
    ["NaN payload", ["r", Number.NaN]],
    ["trim past the safe integers", ["t", ["a"], Number.MAX_SAFE_INTEGER + 1]],
    ["reorder with a duplicate index", ["m", ["a"], [0, 0]]],
    ["reorder with a hole", ["m", ["a"], [0, 2]]],
    ["reorder with a negative index", ["m", ["a"], [-1, 0]]],
    ["reorder with a fractional index", ["m", ["a"], [0, 1.5]]],
    ["reorder with a string index", ["m", ["a"], ["0"]]],
    ["reorder with a permutation that is not an array", ["m", ["a"], { 0: 0 }]],
    ["reorder without a path", ["m", [0]]],
    ["reorder with a string path", ["m", "a", []]],
  ];
  it.each(bad)("refuses %s", (_, op) => {
    expect(() => assertValidOp(op)).toThrow(InvalidOpError);
  });

  it("accepts every verb in its proper form", () => {
    const good: Op[] = [
      ["r", null],
      ["s", ["a", 0], { b: [1] }],
      ["d", ["a"]],
      ["a", ["a"], ""],
      ["t", ["a"], 0],
      ["t", ["a"], Number.MAX_SAFE_INTEGER],
      ["p", [], 0, 0, []],
      ["m", [], []],
      ["m", ["a", 1], [2, 0, 1]],
    ];
    for (const op of good) expect(() => assertValidOp(op)).not.toThrow();
  });

  it("names the problem in its message", () => {
    expect(() => assertValidOp(["t", ["a"], -1])).toThrow(/non-negative integer/);
    expect(() => assertValidOp(["q"])).toThrow(/unknown verb "q"/);
    expect(() => assertValidOp(["s", ["a"]])).toThrow(/takes 3 elements, got 2/);
  });

  it("refuses unsafe segments as UnsafePathError, a ChordError and TypeError", () => {
    expect(() => assertValidOp(["d", ["__proto__"]])).toThrow(UnsafePathError);
    expect(() => assertValidOp(["d", ["__proto__"]])).toThrow(ChordError);
    expect(() => assertValidOp(["d", ["__proto__"]])).toThrow(TypeError);
  });
});

describe("assertValidWireOp", () => {
  it("accepts full paths, ids, definitions and short forms", () => {
    const good: unknown[] = [
      ["r", {}],
      ["s", ["a"], 1],
      ["s", 3, 1],
      ["#", 0, ["a"]],
      ["#", 7, []],
      ["m", [], [1, 0]],
      ["m", 2, []],
      ["m", [0]],
      ["s", 1],
      ["d", 0],
      ["d"],
      ["a", "x"],
      ["t", 2],
      ["p", 0, 0, []],
      ["p", [], 0, 0, []],
    ];
    for (const w of good) expect(() => assertValidWireOp(w)).not.toThrow();
  });

  const bad: [string, unknown][] = [
    ["unknown verb", ["z", 1]],
    ["wrong arity", ["p", 0, 0]],
    ["r without value", ["r"]],
    ["negative id", ["a", -1, "x"]],
    ["fractional id", ["a", 1.5, "x"]],
    ["negative defined id", ["#", -1, ["x"]]],
    ["fractional defined id", ["#", 0.5, ["x"]]],
    ["definition without a path", ["#", 0]],
    ["definition with a string path", ["#", 0, "x"]],
    ["the old intern form in the path slot", ["a", ["#", 0, ["x"]], "x"]],
    ["a duplicate in a permutation", ["m", [1, 1]]],
    ["a hole in a permutation", ["m", ["a"], [0, 2]]],
    ["a non-integer in a permutation", ["m", [0.5, 1]]],
    ["a permutation that is not an array", ["m", ["a"], 0]],
    ["m with too many elements", ["m", ["a"], [0], 1]],
    ["non-string append", ["a", 5]],
    ["negative trim", ["t", -3]],
    ["non-array splice items", ["p", 0, 0, {}]],
    ["string path", ["d", "a"]],
  ];
  it.each(bad)("refuses %s", (_, w) => {
    expect(() => assertValidWireOp(w)).toThrow(InvalidOpError);
  });

  it("refuses unsafe segments in an interned path", () => {
    expect(() => assertValidWireOp(["#", 0, ["constructor"]])).toThrow(UnsafePathError);
    expect(() => assertValidWireOp(["#", 0, ["a", "__proto__"]])).toThrow(UnsafePathError);
  });
});

describe("isBase", () => {
  it("is true exactly when the first op is r", () => {
    expect(isBase([["r", 1]])).toBe(true);
    expect(isBase([])).toBe(false);
    expect(isBase([["s", ["r"], 1]])).toBe(false);
    expect(isBase([["p", [], 0, 0, []]])).toBe(false);
  });
});
