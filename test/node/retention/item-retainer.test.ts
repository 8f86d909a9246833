import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ItemRetainer, Omitted } from "../../../src/core/retention/index.ts";

function feed(maxItems: number, stop: "stopWhenFull" | "readToEnd", count: number) {
  const r = new ItemRetainer<number>({ kind: "head", maxItems, stop });
  const pushes = [];
  for (let i = 0; i < count; i++) {
    const p = r.push(i);
    pushes.push(p);
    if (p.shouldStop) break;
  }
  return { pushes, result: r.finish(), seen: r.seen };
}

describe("ItemRetainer", () => {
  it.each(["stopWhenFull", "readToEnd"] as const)(
    "keeps exactly maxItems without truncating (%s)",
    (stop) => {
      const { pushes, result } = feed(3, stop, 3);
      expect(pushes.every((p) => p.kept && !p.truncated && !p.shouldStop)).toBe(true);
      expect(result).toEqual({ items: [0, 1, 2], truncated: false, omitted: Omitted.none() });
    },
  );

  it.each(["stopWhenFull", "readToEnd"] as const)(
    "keeps fewer than maxItems as they are (%s)",
    (stop) => {
      expect(feed(3, stop, 2).result).toEqual({
        items: [0, 1],
        truncated: false,
        omitted: Omitted.none(),
      });
    },
  );

  it("stops at the probe (item maxItems + 1) and reports at least one omitted", () => {
    const { pushes, result, seen } = feed(3, "stopWhenFull", 100);
    expect(seen).toBe(4);
    expect(pushes.at(-1)).toEqual({ kept: false, truncated: true, shouldStop: true });
    expect(result).toEqual({ items: [0, 1, 2], truncated: true, omitted: Omitted.atLeast(1) });
  });

  it("counts exactly with readToEnd", () => {
    const { pushes, result } = feed(3, "readToEnd", 28);
    expect(pushes.at(-1)).toEqual({ kept: false, truncated: true, shouldStop: false });
    expect(result).toEqual({ items: [0, 1, 2], truncated: true, omitted: Omitted.exact(25) });
  });

  it("keeps nothing with a zero budget: the first item is the probe", () => {
    expect(feed(0, "stopWhenFull", 5).result).toEqual({
      items: [],
      truncated: true,
      omitted: Omitted.atLeast(1),
    });
    expect(feed(0, "readToEnd", 5).result).toEqual({
      items: [],
      truncated: true,
      omitted: Omitted.exact(5),
    });
    expect(feed(0, "readToEnd", 0).result).toEqual({
      items: [],
      truncated: false,
      omitted: Omitted.none(),
    });
  });

  it("keeps counting pushes a producer makes after the probe, as a lower bound", () => {
    const r = new ItemRetainer<number>({ kind: "head", maxItems: 1, stop: "stopWhenFull" });
    for (let i = 0; i < 4; i++) r.push(i);
    expect(r.finish().omitted).toEqual(Omitted.atLeast(3));
  });

  it("refuses invalid budgets and options with a clear error", () => {
    const make =
      (maxItems: unknown, stop: unknown = "readToEnd", kind: unknown = "head") =>
      () =>
        new ItemRetainer({ kind, maxItems, stop } as never);
    expect(make(-1)).toThrow(
      new RangeError(
        "ItemRetainer: maxItems must be a non-negative integer (0 keeps nothing), got -1.",
      ),
    );
    expect(make(1.5)).toThrow(/maxItems must be a non-negative integer .* got 1\.5/);
    expect(make(Number.NaN)).toThrow(/got NaN/);
    expect(make(Number.POSITIVE_INFINITY)).toThrow(/got Infinity/);
    expect(make("10")).toThrow(/got "10"/);
    expect(make(undefined)).toThrow(/got undefined/);
    expect(make(1, "sometimes")).toThrow(
      /stop must be "stopWhenFull" or "readToEnd", got "sometimes"/,
    );
    expect(make(1, "readToEnd", "tail")).toThrow(/kind must be "head", got "tail"/);
  });

  it("returns the same result from finish() twice and refuses later pushes", () => {
    const r = new ItemRetainer<number>({ kind: "head", maxItems: 1, stop: "readToEnd" });
    r.push(1);
    expect(r.finish()).toBe(r.finish());
    expect(() => r.push(2)).toThrow(/push\(\) after finish\(\)/);
  });

  it("keeps the first maxItems and accounts for the rest, for any count", () => {
    fc.assert(
      fc.property(
        fc.nat(20),
        fc.nat(30),
        fc.constantFrom("stopWhenFull" as const, "readToEnd" as const),
        (maxItems, count, stop) => {
          const { result, seen } = feed(maxItems, stop, count);
          expect(result.items).toEqual(
            Array.from({ length: Math.min(maxItems, count) }, (_, i) => i),
          );
          expect(result.truncated).toBe(count > maxItems);
          if (count <= maxItems) expect(result.omitted).toEqual(Omitted.none());
          else if (stop === "readToEnd")
            expect(result.omitted).toEqual(Omitted.exact(count - maxItems));
          else {
            expect(seen).toBe(maxItems + 1);
            expect(result.omitted).toEqual(Omitted.atLeast(1));
          }
        },
      ),
      { seed: 9, numRuns: 1000 },
    );
  });
});
