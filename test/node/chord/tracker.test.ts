import { describe, expect, it } from "vitest";
import {
  apply,
  decoder,
  encoder,
  isBase,
  type JsonValue,
  NotJsonError,
  type Tracker,
  track,
  UnsafePathError,
} from "../../../src/core/chord/index.ts";

/** A tracker already past its first (base) flush. Typed loosely so tests can write odd values. */
function tracked<T>(value: T): Tracker<T> {
  const t = track(value as JsonValue);
  t.flush();
  return t as unknown as Tracker<T>;
}

describe("strings", () => {
  it("a pure append is one a", () => {
    const t = tracked({ text: "hello" });
    t.state.text += " world";
    expect(t.flush()).toEqual([["a", ["text"], " world"]]);
  });

  it("a rolling window s.slice(k) + x is t + a", () => {
    const start = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(
      "",
    );
    const t = tracked({ text: start });
    t.state.text = `${t.state.text.slice(32)}0123456789abcdefghijklmnopqrstuv`;
    expect(t.flush()).toEqual([
      ["t", ["text"], 32],
      ["a", ["text"], "0123456789abcdefghijklmnopqrstuv"],
    ]);
  });

  it('finds the short overlap "abcdefgh" -> "defghxyz"', () => {
    const t = tracked({ text: "abcdefgh" });
    t.state.text = "defghxyz";
    expect(t.flush()).toEqual([
      ["t", ["text"], 3],
      ["a", ["text"], "xyz"],
    ]);
  });

  it("a pure trim is one t", () => {
    const t = tracked({ text: "abcdef" });
    t.state.text = "cdef";
    expect(t.flush()).toEqual([["t", ["text"], 2]]);
  });

  it("unrelated text is one s", () => {
    const t = tracked({ text: "abc" });
    t.state.text = "xyz";
    expect(t.flush()).toEqual([["s", ["text"], "xyz"]]);
  });

  it("compares against the baseline, not the writes in between", () => {
    const t = tracked({ text: "abc" });
    t.state.text = "zzz";
    t.state.text = "abcd";
    expect(t.flush()).toEqual([["a", ["text"], "d"]]);
    t.state.text = "x";
    t.state.text = "abcd";
    expect(t.flush()).toEqual([]);
  });
});

describe("arrays", () => {
  it("push, unshift and splice are one p each", () => {
    const t = tracked({ list: [1, 2, 3] });
    t.state.list.push(4, 5);
    expect(t.flush()).toEqual([["p", ["list"], 3, 0, [4, 5]]]);
    t.state.list.unshift(0);
    expect(t.flush()).toEqual([["p", ["list"], 0, 0, [0]]]);
    t.state.list.splice(2, 2, 9);
    expect(t.flush()).toEqual([["p", ["list"], 2, 2, [9]]]);
    expect(t.state.list).toEqual([0, 1, 9, 4, 5]);
  });

  it("pop, shift and a splice that removes are one p each", () => {
    const t = tracked({ list: ["a", "b", "c", "d"] });
    expect(t.state.list.pop()).toBe("d");
    expect(t.flush()).toEqual([["p", ["list"], 3, 1, []]]);
    expect(t.state.list.shift()).toBe("a");
    expect(t.flush()).toEqual([["p", ["list"], 0, 1, []]]);
  });

  it("length = 0 empties with one op, and growing pads with nulls", () => {
    const t = tracked({ list: [1, 2, 3] });
    t.state.list.length = 0;
    expect(t.flush()).toEqual([["p", ["list"], 0, 3, []]]);
    t.state.list.length = 2;
    expect(t.flush()).toEqual([["p", ["list"], 0, 0, [null, null]]]);
    t.state.list.length = 1;
    expect(t.flush()).toEqual([["p", ["list"], 1, 1, []]]);
    expect(t.state.list).toEqual([null]);
  });

  it("splices the root array", () => {
    const t = tracked([1, 2, 3]);
    t.state.splice(1, 1, 7, 8);
    expect(t.flush()).toEqual([["p", [], 1, 1, [7, 8]]]);
  });

  it.each([
    [3, 3],
    [4, 4],
    [5, 1],
  ])("rewrites %i same-length positions as %i op(s)", (count, opCount) => {
    const t = tracked({ list: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] });
    t.state.list.splice(2, count, ...Array.from({ length: count }, (_, i) => 100 + i));
    const ops = t.flush();
    expect(ops).toHaveLength(opCount);
    expect(apply({ list: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }, ops)).toEqual({ list: t.state.list });
  });

  it("normalises a whole-target splice to s (nested) or r (root)", () => {
    const t = tracked({ list: [1, 2] });
    t.state.list.splice(0, 2, 3);
    expect(t.flush()).toEqual([["s", ["list"], [3]]]);
    const root = tracked([1, 2]);
    root.state.splice(0, 2, 3, 4, 5);
    expect(root.flush()).toEqual([["r", [3, 4, 5]]]);
  });

  it("uses numbers for indexes and strings for object keys", () => {
    const t = tracked({ list: [{ v: 1 }], map: { "0": 1 } as Record<string, number> });
    (t.state.list[0] as { v: number }).v = 2;
    t.state.map["0"] = 5;
    expect(t.flush()).toEqual([
      ["s", ["list", 0, "v"], 2],
      ["s", ["map", "0"], 5],
    ]);
  });

  it("tracks an element moved by unshift at its new index", () => {
    const t = tracked({ list: [{ text: "a" }] });
    const first = t.state.list[0] as { text: string };
    t.state.list.unshift({ text: "new" });
    t.flush();
    first.text += "b";
    expect(t.flush()).toEqual([["a", ["list", 1, "text"], "b"]]);
  });

  it("sort, reverse, fill and copyWithin keep every element owned once", () => {
    const t = tracked({ list: [{ n: 3 }, { n: 1 }, { n: 2 }] });
    let replica: JsonValue = { list: [{ n: 3 }, { n: 1 }, { n: 2 }] };
    t.state.list.sort((a, b) => (a as { n: number }).n - (b as { n: number }).n);
    t.state.list.copyWithin(0, 2);
    (t.state.list[0] as { n: number }).n = 9;
    t.state.list.reverse();
    t.state.list.fill({ n: 0 }, 2);
    (t.state.list[2] as { n: number }).n = 4;
    expect(t.state.list).toEqual([{ n: 3 }, { n: 2 }, { n: 4 }]);
    replica = apply(replica, t.flush());
    expect(replica).toEqual({ list: [{ n: 3 }, { n: 2 }, { n: 4 }] });
    (t.state.list[0] as { n: number }).n = 1;
    expect(t.flush()).toEqual([["s", ["list", 0, "n"], 1]]);
  });
});

describe("reorders", () => {
  const rows = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ id: i, name: `row ${(i * 7) % n}` }));

  it("a sort or reverse of objects is one m, smaller than sending the objects again", () => {
    const t = tracked({ list: rows(10) });
    t.state.list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const sorted = t.flush();
    expect(sorted).toEqual([["m", ["list"], [0, 3, 6, 9, 2, 5, 8, 1, 4, 7]]]);
    t.state.list.reverse();
    expect(t.flush()).toEqual([["m", ["list"], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]]);
    const replica = apply({ list: rows(10) }, sorted);
    expect(apply(replica, [["m", ["list"], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]])).toEqual(
      JSON.parse(JSON.stringify(t.state)),
    );
  });

  it("a root array reversed is an m, not a base", () => {
    const t = tracked(["alpha", "beta", "gamma", "delta"]);
    t.state.reverse();
    expect(t.flush()).toEqual([["m", [], [3, 2, 1, 0]]]);
  });

  it("keeps splices where they are smaller: short numbers, or one element out of place", () => {
    const digits = tracked({ list: [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9] });
    digits.state.list.sort();
    expect(digits.flush().map((op) => op[0])).not.toContain("m");
    const nearly = tracked({ list: [{ id: 99 }, ...rows(30)] });
    nearly.state.list.sort((a, b) => a.id - b.id);
    // The first element moved to the end: a drop at the front and a push are smaller.
    expect(nearly.flush()).toEqual([
      ["p", ["list"], 0, 1, []],
      ["p", ["list"], 30, 0, [{ id: 99 }]],
    ]);
  });

  it("sends splices when an element also changed inside, or the array is no longer the same elements", () => {
    const inside = tracked({ list: rows(6) });
    inside.state.list.reverse();
    (inside.state.list[0] as { name: string }).name = "changed";
    const ops = inside.flush();
    expect(ops.map((op) => op[0])).not.toContain("m");
    expect(apply({ list: rows(6) }, ops)).toEqual(JSON.parse(JSON.stringify(inside.state)));
    const grown = tracked({ list: rows(6) });
    grown.state.list.reverse();
    grown.state.list.push({ id: 6, name: "new" });
    expect(grown.flush().map((op) => op[0])).not.toContain("m");
  });

  it("an element changed after the reorder's flush is an op at its new index", () => {
    const t = tracked({ list: rows(5) });
    t.state.list.reverse();
    expect(t.flush()[0]?.[0]).toBe("m");
    (t.state.list[0] as { name: string }).name = "first";
    expect(t.flush()).toEqual([["s", ["list", 0, "name"], "first"]]);
  });
});

describe("objects", () => {
  it("assigning undefined is d", () => {
    const t = tracked({ a: 1, b: 2 } as Record<string, number | undefined>);
    t.state.a = undefined;
    delete t.state.b;
    expect(t.flush()).toEqual([
      ["d", ["a"]],
      ["d", ["b"]],
    ]);
  });

  it("1,000 alternating writes to two fields flush to at most 3 ops", () => {
    const t = tracked({ x: -1, y: -1 });
    for (let i = 0; i < 1000; i++) {
      if (i % 2 === 0) t.state.x = i;
      else t.state.y = i;
    }
    const ops = t.flush();
    expect(ops.length).toBeLessThanOrEqual(3);
    expect(ops).toEqual([
      ["s", ["x"], 998],
      ["s", ["y"], 999],
    ]);
  });

  it("caches proxies, so s.a === s.a", () => {
    const t = tracked({ a: { b: [1] } });
    expect(t.state.a).toBe(t.state.a);
    expect(t.state.a.b).toBe(t.state.a.b);
  });

  it("copies values in: later changes to the assigned object are not tracked", () => {
    const t = tracked({ a: {} as { n?: number } });
    const plain: { n?: number } = { n: 1 };
    t.state.a = plain;
    plain.n = 2;
    expect(t.flush()).toEqual([["s", ["a"], { n: 1 }]]);
  });

  it("a draft assigned elsewhere is copied from its current contents", () => {
    const t = tracked({ a: { n: 1 }, b: null as { n: number } | null });
    t.state.b = t.state.a;
    t.state.a.n = 2;
    expect(t.flush()).toEqual([
      ["s", ["b"], { n: 1 }],
      ["s", ["a", "n"], 2],
    ]);
  });

  it("emits payloads that never alias producer state", () => {
    const t = track({ a: { list: [1] } });
    const base = t.flush();
    t.state.a.list.push(2);
    expect(base).toEqual([["r", { a: { list: [1] } }]]);
    t.state.a = { list: [5] };
    const ops = t.flush();
    t.state.a.list.push(6);
    expect(ops).toEqual([["s", ["a"], { list: [5] }]]);
    const payload = ops[0]?.[2] as object;
    expect(Object.getOwnPropertySymbols(payload)).toEqual([]);
    const snapshot = base[0]?.[1] as { a: object };
    expect(Object.getOwnPropertySymbols(snapshot.a)).toEqual([]);
  });

  it("copies a plain node that leaked out through a property descriptor", () => {
    const t = tracked({ a: { n: 1 }, b: null as unknown });
    const raw = Object.getOwnPropertyDescriptor(t.state, "a")?.value as { n: number };
    t.state.b = raw;
    t.state.a.n = 2;
    expect(t.flush()).toEqual([
      ["s", ["b"], { n: 1 }],
      ["s", ["a", "n"], 2],
    ]);
  });
});

describe("base batches", () => {
  it("the first flush is a base", () => {
    const t = track({ a: 1 });
    t.state.a = 2;
    const ops = t.flush();
    expect(isBase(ops)).toBe(true);
    expect(ops).toEqual([["r", { a: 2 }]]);
    expect(t.flush()).toEqual([]);
  });

  it("rebase() gives exactly one base", () => {
    const t = tracked({ a: 1 });
    t.rebase();
    t.state.a = 2;
    expect(t.flush()).toEqual([["r", { a: 2 }]]);
    t.state.a = 3;
    expect(t.flush()).toEqual([["s", ["a"], 3]]);
  });

  it("assigning state gives exactly one base", () => {
    const t = tracked({ a: 1 } as JsonValue);
    t.state = [1, 2];
    expect(t.flush()).toEqual([["r", [1, 2]]]);
    (t.state as number[]).push(3);
    expect(t.flush()).toEqual([["p", [], 2, 0, [3]]]);
  });

  it("nothing else produces one", () => {
    const t = tracked({ text: "", list: [] as number[], o: {} as Record<string, number> });
    for (let i = 0; i < 50; i++) {
      t.state.text = `${t.state.text.slice(1)}${i}`;
      t.state.list.push(i);
      if (i % 3 === 0) t.state.list.splice(0, 1);
      t.state.o[`k${i % 4}`] = i;
      expect(isBase(t.flush())).toBe(false);
    }
  });
});

describe("discard", () => {
  it("puts every write since the last flush back", () => {
    const t = tracked({
      text: "abc",
      list: [{ n: 1 }, { n: 2 }],
      o: { k: 1 } as Record<string, number>,
    });
    const first = t.state.list[0] as { n: number };
    t.state.text += "d";
    first.n = 5;
    t.state.list.shift();
    t.state.list.push({ n: 3 });
    t.state.o.extra = 2;
    delete t.state.o.k;
    t.discard();
    expect(t.dirty).toBe(false);
    expect(JSON.parse(JSON.stringify(t.state))).toEqual({
      text: "abc",
      list: [{ n: 1 }, { n: 2 }],
      o: { k: 1 },
    });
    expect(t.flush()).toEqual([]);
    first.n = 7;
    expect(t.flush()).toEqual([["s", ["list", 0, "n"], 7]]);
  });

  it("refuses a non-JSON state assignment and keeps the state", () => {
    const t = tracked({ a: 1 } as JsonValue);
    expect(() => {
      t.state = new Map() as unknown as JsonValue;
    }).toThrow(NotJsonError);
    expect(t.state).toEqual({ a: 1 });
    expect(t.dirty).toBe(false);
    expect(t.flush()).toEqual([]);
  });

  it("undoes a state assignment and keeps a pending rebase", () => {
    const t = tracked({ a: 1 } as JsonValue);
    t.state = { b: 2 };
    t.discard();
    expect(t.state).toEqual({ a: 1 });
    expect(t.flush()).toEqual([]);
    t.rebase();
    t.discard();
    expect(t.flush()).toEqual([["r", { a: 1 }]]);
  });
});

describe("dirty", () => {
  it("is set by a write and cleared by flush", () => {
    const t = tracked({ a: 1, list: [] as number[] });
    expect(t.dirty).toBe(false);
    t.state.a = 1;
    expect(t.dirty).toBe(false);
    t.state.list.push(1);
    expect(t.dirty).toBe(true);
    t.flush();
    expect(t.dirty).toBe(false);
    t.rebase();
    expect(t.dirty).toBe(true);
  });
});

describe("flush cost", () => {
  function workFor(untouched: number) {
    const fields: Record<string, JsonValue> = { text: "" };
    for (let i = 0; i < untouched; i++) fields[`f${i}`] = { v: i, s: "x" };
    const t = tracked(fields);
    t.state.f7 = { v: 70 };
    const f3 = t.state.f3 as { v: number };
    for (let round = 0; round < 10; round++) {
      t.state.text += "more ";
      f3.v = round;
    }
    const ops = t.flush();
    return { ops, work: t.work };
  }

  it("grows with what changed, not with the size of the state", () => {
    const small = workFor(250);
    const large = workFor(2500);
    expect(large.ops).toEqual(small.ops);
    expect(large.work).toEqual(small.work);
    expect(small.work.nodes).toBeLessThanOrEqual(3);
  });

  it("is counted per tracker: another tracker's flush does not change it", () => {
    const a = tracked({ x: 1, y: { z: 1 } });
    const b = tracked({ p: { q: { list: [1, 2, 3] } } });
    (a.state.y as { z: number }).z = 2;
    a.flush();
    const before = a.work;
    expect(before.nodes).toBe(2);
    b.state.p.q.list.push(4);
    b.flush();
    expect(a.work).toEqual(before);
    expect(b.work.nodes).toBe(4);
  });
});

describe("refusals", () => {
  class Point {
    x = 1;
  }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const withSymbol = { [Symbol("s")]: 1 };
  const cases: [string, unknown][] = [
    ["Map", new Map()],
    ["Set", new Set()],
    ["Date", new Date(0)],
    ["RegExp", /x/],
    ["Uint8Array", new Uint8Array(2)],
    ["class instance", new Point()],
    ["function", () => 1],
    ["BigInt", 10n],
    ["cycle", cyclic],
    ["symbol key", withSymbol],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point of this case
    ["sparse array", [1, , 3]],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["undefined in an array", [undefined]],
  ];

  it.each(cases)("refuses a %s with a clear TypeError and changes nothing", (_, bad) => {
    const t = tracked({ a: { b: 1 } } as Record<string, unknown>);
    const inner = t.state.a as Record<string, unknown>;
    expect(() => {
      inner.b = { deep: [bad] };
    }).toThrow(NotJsonError);
    expect(() => {
      inner.b = { deep: [bad] };
    }).toThrow(/state\.a\.b\.deep\[0\]/);
    expect(() => track({ v: bad } as JsonValue)).toThrow(TypeError);
    expect(t.flush()).toEqual([]);
    expect(t.state).toEqual({ a: { b: 1 } });
  });

  it("refuses symbol keys, sparse writes and odd array properties on drafts", () => {
    const t = tracked({ o: {} as Record<string | symbol, unknown>, list: [1] as unknown[] });
    expect(() => {
      t.state.o[Symbol("k")] = 1;
    }).toThrow(NotJsonError);
    expect(() => {
      t.state.list[5] = 1;
    }).toThrow(/hole/);
    expect(() => {
      (t.state.list as unknown as Record<string, unknown>).name = "x";
    }).toThrow(/indexes only/);
    expect(() => {
      t.state.list.length = -1;
    }).toThrow(TypeError);
    expect(() => {
      delete t.state.list[0];
    }).toThrow(/splice/);
    expect(() => t.state.list.push(undefined)).toThrow(NotJsonError);
    expect(() => Object.defineProperty(t.state.o, "k", { value: 1 })).toThrow(TypeError);
    expect(t.flush()).toEqual([]);
  });

  it.each(["__proto__", "constructor", "prototype"])(
    "refuses the segment %s at record time",
    (key) => {
      const t = tracked({ o: {} as Record<string, unknown> });
      expect(() => {
        t.state.o[key] = 1;
      }).toThrow(UnsafePathError);
      expect(() => {
        t.state.o.x = JSON.parse(`{"${key}": {"polluted": true}}`);
      }).toThrow(UnsafePathError);
      expect(() => track(JSON.parse(`{"${key}": 1}`))).toThrow(UnsafePathError);
      expect(t.flush()).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});

describe("replicas", () => {
  it("a subscriber joining later starts from a base of its own", () => {
    const t = track({ text: "" });
    const enc = encoder();
    const dec = decoder();
    let replica: JsonValue = null;
    replica = apply(replica, dec.decode(enc.encode(t.flush())));
    for (let i = 0; i < 5; i++) {
      t.state.text += `line ${i}\n`;
      replica = apply(replica, dec.decode(enc.encode(t.flush())));
    }
    expect(replica).toEqual({ text: "line 0\nline 1\nline 2\nline 3\nline 4\n" });
  });
});

describe("detached drafts", () => {
  it("a removed element's draft no longer reaches the state", () => {
    const t = tracked({ list: [{ n: 1 }, { n: 2 }] });
    const removed = t.state.list.shift() as { n: number };
    expect(removed).toEqual({ n: 1 });
    t.flush();
    removed.n = 99;
    expect(t.flush()).toEqual([]);
    expect(t.state.list).toEqual([{ n: 2 }]);
  });

  it("a draft from before a state assignment no longer reaches the state", () => {
    const t = tracked({ a: { n: 1 } } as JsonValue);
    const old = (t.state as { a: { n: number } }).a;
    t.state = { a: { n: 5 } };
    t.flush();
    old.n = 7;
    expect(t.flush()).toEqual([]);
    expect(t.state).toEqual({ a: { n: 5 } });
  });

  it("a replaced child's draft no longer reaches the state", () => {
    const t = tracked({ a: { n: 1 } });
    const old = t.state.a;
    t.state.a = { n: 2 };
    old.n = 3;
    expect(t.flush()).toEqual([["s", ["a"], { n: 2 }]]);
    old.n = 4;
    expect(t.flush()).toEqual([]);
  });
});

describe("rolling lists", () => {
  it("shift + push on a list of objects is two splices, not a whole set", () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ id: i, text: `line ${i}` }));
    const t = tracked({ items });
    t.state.items.shift();
    t.state.items.shift();
    t.state.items.push({ id: 50, text: "line 50" });
    (t.state.items[0] as { text: string }).text += "!";
    expect(t.flush()).toEqual([
      ["p", ["items"], 0, 2, []],
      ["a", ["items", 0, "text"], "!"],
      ["p", ["items"], 48, 0, [{ id: 50, text: "line 50" }]],
    ]);
  });

  it("verifies every kept item before using a shift", () => {
    const t = tracked({ items: [1, 2, 3, 2, 5] });
    t.state.items.splice(0, 5, 2, 9, 2, 5, 6);
    const ops = t.flush();
    expect(apply({ items: [1, 2, 3, 2, 5] }, ops)).toEqual({ items: [2, 9, 2, 5, 6] });
  });
});
