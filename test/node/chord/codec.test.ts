import { describe, expect, it } from "vitest";
import {
  apply,
  CodecError,
  decoder,
  encoder,
  InvalidOpError,
  type JsonValue,
  type Op,
  track,
  UnsafePathError,
  type WireOp,
} from "../../../src/core/chord/index.ts";

describe("encoder", () => {
  it("defines a path on its second use with a wire op of its own before the op, then sends its id", () => {
    const enc = encoder();
    expect(enc.encode([["a", ["out", "text"], "a"]])).toEqual([["a", ["out", "text"], "a"]]);
    expect(enc.encode([["a", ["out", "text"], "b"]])).toEqual([
      ["#", 0, ["out", "text"]],
      ["a", 0, "b"],
    ]);
    expect(enc.encode([["a", ["out", "text"], "c"]])).toEqual([["a", 0, "c"]]);
    expect(enc.encode([["s", ["n"], 1]])).toEqual([["s", ["n"], 1]]);
    expect(
      enc.encode([
        ["s", ["n"], 2],
        ["a", ["out", "text"], "d"],
      ]),
    ).toEqual([
      ["#", 1, ["n"]],
      ["s", 1, 2],
      ["a", 0, "d"],
    ]);
  });

  it("defines a path reused within one batch, and a definition does not break path omission", () => {
    const enc = encoder();
    expect(
      enc.encode([
        ["a", ["x"], "1"],
        ["a", ["y"], "2"],
        ["a", ["x"], "3"],
        ["t", ["x"], 1],
        ["m", [], [1, 0]],
        ["p", [], 0, 1, []],
      ]),
    ).toEqual([
      ["a", ["x"], "1"],
      ["a", ["y"], "2"],
      ["#", 0, ["x"]],
      ["a", 0, "3"],
      ["t", 1],
      ["m", [], [1, 0]],
      ["p", 0, 1, []],
    ]);
  });

  it("omits a path that repeats the previous op's path in the same batch", () => {
    const enc = encoder();
    const ops: Op[] = [
      ["t", ["text"], 3],
      ["a", ["text"], "xyz"],
      ["s", ["list", 0], 1],
      ["d", ["list", 0]],
      ["p", ["list"], 0, 0, [1]],
      ["p", ["list"], 1, 0, [2]],
    ];
    expect(enc.encode(ops)).toEqual([
      ["t", ["text"], 3],
      ["a", "xyz"],
      ["s", ["list", 0], 1],
      ["d"],
      ["p", ["list"], 0, 0, [1]],
      ["p", 1, 0, [2]],
    ]);
  });

  it("never omits across batches", () => {
    const enc = encoder();
    enc.encode([["a", ["text"], "x"]]);
    expect(enc.encode([["a", ["text"], "y"]])[0]?.length).toBe(3);
  });

  it("resets both tables on a base batch", () => {
    const enc = encoder();
    enc.encode([["a", ["text"], "x"]]);
    enc.encode([["a", ["text"], "y"]]);
    expect(enc.encode([["a", ["text"], "z"]])).toEqual([["a", 0, "z"]]);
    expect(
      enc.encode([
        ["r", { text: "" }],
        ["a", ["text"], "1"],
      ]),
    ).toEqual([
      ["r", { text: "" }],
      ["a", ["text"], "1"],
    ]);
    expect(enc.encode([["a", ["text"], "2"]])).toEqual([
      ["#", 0, ["text"]],
      ["a", 0, "2"],
    ]);
  });

  it("refuses an r that is not first, and leaves its tables alone", () => {
    const enc = encoder();
    const bad: Op[] = [
      ["s", ["a"], 1],
      ["r", {}],
    ];
    expect(() => enc.encode(bad)).toThrow(InvalidOpError);
    expect(enc.encode([["s", ["a"], 2]])).toEqual([["s", ["a"], 2]]);
  });
});

describe("decoder", () => {
  it("round-trips what the encoder produced", () => {
    const enc = encoder();
    const dec = decoder();
    const batches: Op[][] = [
      [["r", { text: "", list: [] }]],
      [
        ["a", ["text"], "ab"],
        ["p", ["list"], 0, 0, [1]],
      ],
      [
        ["t", ["text"], 1],
        ["a", ["text"], "c"],
        ["p", ["list"], 1, 0, [2]],
      ],
      [
        ["a", ["text"], "d"],
        ["p", [], 0, 0, []],
      ],
      [
        ["m", ["list"], [1, 0]],
        ["m", ["list"], [0, 1]],
        ["a", ["text"], "e"],
        ["m", [], [0]],
      ],
      [
        ["m", ["list"], [1, 0]],
        ["m", [], [0]],
      ],
    ];
    for (const ops of batches) {
      expect(dec.decode(JSON.parse(JSON.stringify(enc.encode(ops))))).toEqual(ops);
    }
  });

  it("refuses a short form with no previous path", () => {
    const dec = decoder();
    expect(() => dec.decode([["a", "x"]])).toThrow(CodecError);
    expect(() =>
      dec.decode([
        ["r", {}],
        ["a", "x"],
      ]),
    ).toThrow(/omits its path/);
  });

  it("refuses an unknown id and an id defined out of order", () => {
    const dec = decoder();
    expect(() => dec.decode([["a", 0, "x"]])).toThrow(/never defined/);
    expect(() =>
      dec.decode([
        ["#", 1, ["text"]],
        ["a", 1, "x"],
      ]),
    ).toThrow(/out of order/);
    dec.decode([["#", 0, ["text"]]]);
    expect(() => dec.decode([["#", 0, ["other"]]])).toThrow(/out of order/);
    expect(dec.decode([["a", 0, "x"]])).toEqual([["a", ["text"], "x"]]);
  });

  it("a definition is not a path use: the short form after it refers to the op before it", () => {
    const dec = decoder();
    expect(
      dec.decode([
        ["a", ["y"], "1"],
        ["#", 0, ["x"]],
        ["a", "2"],
        ["a", 0, "3"],
        ["a", "4"],
      ]),
    ).toEqual([
      ["a", ["y"], "1"],
      ["a", ["y"], "2"],
      ["a", ["x"], "3"],
      ["a", ["x"], "4"],
    ]);
    expect(() =>
      decoder().decode([
        ["#", 0, ["x"]],
        ["a", "2"],
      ]),
    ).toThrow(/omits its path/);
  });

  it("refuses the old intern form in the path slot (stored rows are upgraded before decoding)", () => {
    expect(() => decoder().decode([["a", ["#", 0, ["text"]], "x"]])).toThrow(InvalidOpError);
  });

  it("refuses unsafe segments, including through an interned id", () => {
    const dec = decoder();
    expect(() =>
      dec.decode([
        ["#", 0, ["__proto__"]],
        ["s", 0, 1],
      ]),
    ).toThrow(UnsafePathError);
    expect(() => dec.decode([["#", 0, ["ok", "constructor"]]])).toThrow(UnsafePathError);
    expect(() => dec.decode([["s", 0, 1]])).toThrow(CodecError);
    expect(() => dec.decode([["s", ["a", "constructor"], 1]])).toThrow(UnsafePathError);
    expect(() => dec.decode([["s", ["prototype"], 1]])).toThrow(UnsafePathError);
  });

  it("refuses an id that names the root for a verb that needs a path", () => {
    const dec = decoder();
    dec.decode([
      ["#", 0, []],
      ["p", 0, 0, 0, []],
    ]);
    expect(dec.decode([["m", 0, []]])).toEqual([["m", [], []]]);
    expect(() => dec.decode([["s", 0, 1]])).toThrow(/root/);
    expect(() => dec.decode([["d", 0]])).toThrow(/root/);
  });

  it("leaves its tables alone when a batch fails", () => {
    const dec = decoder();
    expect(() =>
      dec.decode([
        ["#", 0, ["text"]],
        ["a", 0, "x"],
        ["a", 9, "y"],
      ]),
    ).toThrow(CodecError);
    expect(() => dec.decode([["a", 0, "x"]])).toThrow(/never defined/);
    expect(
      dec.decode([
        ["#", 0, ["text"]],
        ["a", 0, "x"],
      ]),
    ).toEqual([["a", ["text"], "x"]]);
  });

  it("resets on a base batch", () => {
    const dec = decoder();
    dec.decode([
      ["#", 0, ["text"]],
      ["a", 0, "x"],
    ]);
    dec.decode([["r", {}]]);
    expect(() => dec.decode([["a", 0, "x"]])).toThrow(/never defined/);
    expect(
      dec.decode([
        ["#", 0, ["other"]],
        ["a", 0, "y"],
      ]),
    ).toEqual([["a", ["other"], "y"]]);
  });

  it("refuses malformed batches", () => {
    const dec = decoder();
    expect(() => dec.decode("nope" as unknown as unknown[])).toThrow(InvalidOpError);
    expect(() =>
      dec.decode([
        ["s", ["a"], 1],
        ["r", {}],
      ]),
    ).toThrow(/only come first/);
    expect(() => dec.decode([["q", ["a"]]])).toThrow(/unknown verb/);
    expect(() => dec.decode([["p", ["a"], 0, 0, 5]])).toThrow(/must be an array/);
    expect(() => dec.decode([["m", ["a"], [0, 0]]])).toThrow(/twice/);
    expect(() => dec.decode([["#", 0]])).toThrow(/"#" takes 3 elements/);
    expect(() => dec.decode([["#", -1, ["a"]]])).toThrow(/non-negative integer/);
    expect(() => dec.decode([["#", 0, "a"]])).toThrow(/must be an array/);
  });
});

describe("recovery", () => {
  it("a fresh decoder rebuilds the state from the last base batch of a log", () => {
    const t = track({ text: "", list: [] as number[] });
    const enc = encoder();
    const log: WireOp[][] = [];
    for (let i = 0; i < 40; i++) {
      if (i % 15 === 14) t.rebase();
      t.state.text = `${t.state.text.slice(i % 3)}step ${i};`;
      t.state.list.push(i);
      if (i % 4 === 0) t.state.list.shift();
      log.push(JSON.parse(JSON.stringify(enc.encode(t.flush()))));
    }
    let start = log.length - 1;
    while (log[start]?.[0]?.[0] !== "r") start--;
    expect(start).toBeGreaterThan(0);
    const dec = decoder();
    let replica: JsonValue = null;
    for (const wire of log.slice(start)) replica = apply(replica, dec.decode(wire));
    expect(replica).toEqual(JSON.parse(JSON.stringify(t.state)));
  });
});
