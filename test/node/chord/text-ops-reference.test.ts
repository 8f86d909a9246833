import * as reference from "@earendil-works/chord/delta";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Op, track } from "../../../src/core/chord/index.ts";

/**
 * The string path op for op against the reference Chord (`@earendil-works/chord/delta`):
 * both index strings by UTF-16 code units, so a cut may fall inside a surrogate pair,
 * and both must then send the same `t`, `a` or `s`. Units include an astral character
 * and both lone surrogates; the small alphabet makes overlaps frequent.
 */
const unit = fc.constantFrom("a", "b", "\n", "é", "😀", "\ud800", "\udc00");
const text = (maxLength: number) => fc.string({ unit, maxLength });

/** How the string changes between two flushes. */
const change = fc.record({
  base: text(200),
  drop: fc.nat(220),
  add: text(40),
  kind: fc.constantFrom("append", "slide", "replace"),
});

/** A guard for a machine shared by many jobs, not a speed claim. */
const PROPERTY_TIMEOUT_MS = 60_000;

function opsOf(
  make: (value: { s: string }) => { state: { s: string }; flush(): unknown },
  base: string,
  next: string,
): Op[] {
  const t = make({ s: base });
  t.flush();
  t.state.s = next;
  return t.flush() as Op[];
}

describe("string changes against the reference Chord", () => {
  it(
    "an append, a drop from the front plus an append, or a new string flush to exactly the reference's ops",
    () => {
      const verbs = new Map<string, number>();
      fc.assert(
        fc.property(change, ({ base, drop, add, kind }) => {
          const next =
            kind === "append"
              ? base + add
              : kind === "slide"
                ? base.slice(Math.min(drop, base.length)) + add
                : add;
          const ours = opsOf((v) => track(v), base, next);
          expect(ours).toEqual(opsOf((v) => reference.track(v), base, next));
          for (const op of ours) verbs.set(op[0], (verbs.get(op[0]) ?? 0) + 1);
        }),
        { seed: 16_4, numRuns: 2000 },
      );
      // The runs exercised every string verb.
      for (const verb of ["a", "t", "s"]) expect(verbs.get(verb) ?? 0).toBeGreaterThan(100);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it("a cut inside a surrogate pair is sent as the reference sends it, by code units", () => {
    const base = "x😀y";
    const next = `${base.slice(2)}z`; // "\ude00yz": the pair's low half is kept
    const ours = opsOf((v) => track(v), base, next);
    expect(ours).toEqual([
      ["t", ["s"], 2],
      ["a", ["s"], "z"],
    ]);
    expect(ours).toEqual(opsOf((v) => reference.track(v), base, next));
  });
});
