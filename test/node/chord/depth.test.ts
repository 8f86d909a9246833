import { describe, expect, it } from "vitest";
import {
  apply,
  assertValidOp,
  assertValidWireOp,
  decoder,
  encoder,
  fitsDepth,
  InvalidOpError,
  type JsonValue,
  MAX_JSON_DEPTH,
  NotJsonError,
  type Op,
  track,
} from "../../../src/core/chord/index.ts";

/** Arrays nested `levels` deep around 0: `nested(0)` is 0, `nested(2)` is [[0]]. */
function nested(levels: number): JsonValue {
  let v: JsonValue = 0;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

/** Objects nested `levels` deep: `{ k: { k: ... } }`. */
function nestedObjects(levels: number): JsonValue {
  let v: JsonValue = "leaf";
  for (let i = 0; i < levels; i++) v = { k: v };
  return v;
}

/** A path of `n` segments into `nested`-shaped arrays. */
const zeros = (n: number): number[] => new Array<number>(n).fill(0);

/** The reviewer's value: arrays 3,600 deep (about 7 KB), which used to break every flush. */
const reviewerValue = nested(3_600);

describe("nesting depth cap (MAX_JSON_DEPTH)", () => {
  it("is 64 levels", () => {
    expect(MAX_JSON_DEPTH).toBe(64);
  });

  it("fitsDepth counts arrays and objects, not scalars, and stops at the limit", () => {
    expect(fitsDepth("x", 0)).toBe(true);
    expect(fitsDepth([], 0)).toBe(false);
    expect(fitsDepth({ a: [1] }, 2)).toBe(true);
    expect(fitsDepth({ a: [1] }, 1)).toBe(false);
    expect(fitsDepth(nested(100_000), MAX_JSON_DEPTH)).toBe(false);
  });

  describe("op payloads (assertValidOp, apply)", () => {
    it("accepts a value at the cap and one under it, refuses one over it naming the limit", () => {
      expect(apply(null, [["r", nested(MAX_JSON_DEPTH)]])).toEqual(nested(MAX_JSON_DEPTH));
      expect(() => assertValidOp(["r", nested(MAX_JSON_DEPTH - 1)])).not.toThrow();
      expect(() => assertValidOp(["r", nestedObjects(MAX_JSON_DEPTH + 1)])).toThrow(
        /nested more than 64 levels deep.*at most 64 levels/,
      );
      expect(() => assertValidOp(["r", nested(MAX_JSON_DEPTH + 1)])).toThrow(InvalidOpError);
      expect(() => assertValidOp(["r", reviewerValue])).toThrow(InvalidOpError);
    });

    it("counts the path: path length plus value depth may reach the cap, not pass it", () => {
      const path = ["a", ...zeros(9)];
      expect(() => assertValidOp(["s", path, nested(MAX_JSON_DEPTH - 10)])).not.toThrow();
      expect(() => assertValidOp(["s", path, nested(MAX_JSON_DEPTH - 11)])).not.toThrow();
      expect(() => assertValidOp(["s", path, nested(MAX_JSON_DEPTH - 9)])).toThrow(
        /more than 54 levels deep/,
      );
      // Splice items sit one level below the array: the items array counts as that level.
      expect(() => assertValidOp(["p", path, 0, 0, [nested(MAX_JSON_DEPTH - 11)]])).not.toThrow();
      expect(() => assertValidOp(["p", path, 0, 0, [nested(MAX_JSON_DEPTH - 10)]])).toThrow(
        InvalidOpError,
      );
    });

    it("a document cannot be grown past the cap op by op", () => {
      let doc = apply(null, [["r", nested(MAX_JSON_DEPTH)]]);
      const grow: Op = ["s", zeros(MAX_JSON_DEPTH), [0]];
      expect(() => (doc = apply(doc, [grow]))).toThrow(InvalidOpError);
      expect(doc).toEqual(nested(MAX_JSON_DEPTH));
    });
  });

  describe("paths", () => {
    it("accepts a path of 64 and of 63 segments, refuses 65 naming the limit", () => {
      expect(() => assertValidOp(["d", zeros(MAX_JSON_DEPTH)])).not.toThrow();
      expect(() => assertValidOp(["a", zeros(MAX_JSON_DEPTH - 1), "x"])).not.toThrow();
      expect(() => assertValidOp(["d", zeros(MAX_JSON_DEPTH + 1)])).toThrow(
        /the path has 65 segments; the limit is 64/,
      );
      expect(() => assertValidWireOp(["t", zeros(MAX_JSON_DEPTH + 1), 1])).toThrow(InvalidOpError);
      expect(() => assertValidWireOp(["#", 0, zeros(MAX_JSON_DEPTH + 1)])).toThrow(
        /the path has 65 segments; the limit is 64/,
      );
      expect(() => assertValidWireOp(["#", 0, zeros(MAX_JSON_DEPTH)])).not.toThrow();
      expect(() => assertValidWireOp(["m", zeros(MAX_JSON_DEPTH + 1), []])).toThrow(InvalidOpError);
    });
  });

  describe("decoder payloads", () => {
    it("decodes a base at the cap and refuses one past it (or the reviewer's 3,600 levels)", () => {
      expect(decoder().decode([["r", nested(MAX_JSON_DEPTH)]])).toEqual([
        ["r", nested(MAX_JSON_DEPTH)],
      ]);
      expect(() => decoder().decode([["r", nested(MAX_JSON_DEPTH - 1)]])).not.toThrow();
      expect(() => decoder().decode([["r", nested(MAX_JSON_DEPTH + 1)]])).toThrow(InvalidOpError);
      expect(() => decoder().decode([["r", reviewerValue]])).toThrow(InvalidOpError);
      expect(() => decoder().decode([["s", zeros(10), nested(MAX_JSON_DEPTH - 9)]])).toThrow(
        InvalidOpError,
      );
    });
  });

  describe("tracker (record time)", () => {
    it("tracks a value at the cap and under it, refuses one over it", () => {
      expect(track(nested(MAX_JSON_DEPTH)).flush()).toEqual([["r", nested(MAX_JSON_DEPTH)]]);
      expect(() => track(nested(MAX_JSON_DEPTH - 1))).not.toThrow();
      expect(() => track(nested(MAX_JSON_DEPTH + 1))).toThrow(NotJsonError);
      expect(() => track(reviewerValue)).toThrow(/more than 64 levels deep/);
    });

    it("counts where the value is written, and a refused write changes nothing", () => {
      const t = track<{ details: JsonValue }>({ details: null });
      t.flush();
      t.state.details = nested(MAX_JSON_DEPTH - 1);
      t.state.details = nested(MAX_JSON_DEPTH - 2);
      expect(() => {
        t.state.details = nested(MAX_JSON_DEPTH);
      }).toThrow(/more than 63 levels deep below state\.details/);
      expect(() => {
        t.state.details = reviewerValue;
      }).toThrow(NotJsonError);
      expect(t.flush()).toEqual([["s", ["details"], nested(MAX_JSON_DEPTH - 2)]]);
    });

    it("array methods and drafts copied from elsewhere in the state obey the cap too", () => {
      const t = track<{ list: JsonValue[]; deep: JsonValue }>({
        list: [],
        deep: nested(MAX_JSON_DEPTH - 1),
      });
      t.flush();
      expect(() => t.state.list.push(nested(MAX_JSON_DEPTH - 2))).not.toThrow();
      expect(() => t.state.list.push(nested(MAX_JSON_DEPTH - 1))).toThrow(NotJsonError);
      // `deep` is a draft 63 levels deep: copying it one level lower would reach 65.
      expect(() => t.state.list.push(t.state.deep)).toThrow(NotJsonError);
      expect(() => t.state.list.unshift(t.state.deep)).toThrow(NotJsonError);
      const flushed = t.flush();
      const replica = apply({ list: [], deep: nested(MAX_JSON_DEPTH - 1) }, flushed);
      expect(replica).toEqual(t.state);
    });

    it("every flush of a capped document decodes and applies on a replica", () => {
      const t = track<{ details: JsonValue }>({ details: null });
      const enc = encoder();
      const dec = decoder();
      let replica: JsonValue = null;
      const sync = () => {
        replica = apply(replica, dec.decode(enc.encode(t.flush())));
      };
      sync();
      t.state.details = nested(MAX_JSON_DEPTH - 1);
      sync();
      t.state.details = nestedObjects(MAX_JSON_DEPTH - 1);
      sync();
      expect(replica).toEqual({ details: nestedObjects(MAX_JSON_DEPTH - 1) });
    });
  });
});
