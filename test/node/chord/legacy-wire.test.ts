import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  decoder,
  encoder,
  type JsonValue,
  type Op,
  track,
  upgradeLegacyWire,
} from "../../../src/core/chord/index.ts";
import { legacyEncoder } from "../../support/legacy-encoder.ts";
import { at, container, containers, mutate, plain, step } from "./mutations.ts";

describe("upgradeLegacyWire", () => {
  it("moves a definition out of the path slot into a wire op of its own, before the op", () => {
    expect(upgradeLegacyWire([["a", ["#", 0, ["text"]], "!"]])).toEqual([
      ["#", 0, ["text"]],
      ["a", 0, "!"],
    ]);
    expect(
      upgradeLegacyWire([
        ["t", ["#", 3, ["content", 0, "text"]], 32],
        ["a", "more"],
        ["s", ["#", 4, ["n"]], { k: 1 }],
        ["d", ["#", 5, ["gone"]]],
        ["p", ["#", 6, []], 0, 1, []],
        ["a", 3, "x"],
      ]),
    ).toEqual([
      ["#", 3, ["content", 0, "text"]],
      ["t", 3, 32],
      ["a", "more"],
      ["#", 4, ["n"]],
      ["s", 4, { k: 1 }],
      ["#", 5, ["gone"]],
      ["d", 5],
      ["#", 6, []],
      ["p", 6, 0, 1, []],
      ["a", 3, "x"],
    ]);
  });

  it("leaves a current-form batch as it is, even where a value looks like the old form", () => {
    const lookalike = ["#", 0, ["x"]];
    const current = [
      ["r", lookalike],
      ["#", 0, ["x"]],
      ["s", 0, lookalike],
      ["s", lookalike],
      ["p", ["xs"], 0, 0, [lookalike]],
      ["p", 0, 0, [lookalike]],
      ["a", ["x"], "y"],
      ["m", [], [0]],
      ["d"],
    ];
    expect(upgradeLegacyWire(current)).toEqual(current);
  });

  it("leaves what is not an op alone, for the decoder to refuse", () => {
    const junk = [5, null, "a", [], ["q", ["#", 0, ["x"]]]];
    expect(upgradeLegacyWire(junk)).toEqual(junk);
    expect(() => decoder().decode(upgradeLegacyWire([["s", ["#", 0, ["__proto__"]], 1]]))).toThrow(
      /Unsafe key "__proto__"/,
    );
  });

  it("turns every batch the first encoder wrote into exactly what today's encoder writes, and a log of them recovers", () => {
    fc.assert(
      fc.property(container, fc.array(step, { minLength: 20, maxLength: 50 }), (start, steps) => {
        const t = track<JsonValue>(plain(start));
        const legacy = legacyEncoder();
        const current = encoder();
        const log: unknown[][] = [];
        // What the stream's replica holds, to turn a reorder into the splice the first
        // tracker sent instead (it had no "m").
        let shadow: JsonValue = null;
        const withoutReorders = (ops: Op[]): Op[] =>
          ops.map((op) => {
            let sent = op;
            if (op[0] === "m") {
              const arr = (op[1].length === 0 ? shadow : at(shadow, op[1])) as JsonValue[];
              sent = ["p", op[1], 0, arr.length, op[2].map((i) => arr[i] as JsonValue)];
            }
            shadow = apply(shadow, [structuredClone(sent)]);
            return sent;
          });
        const flush = () => {
          const ops = withoutReorders(t.flush());
          const stored = JSON.parse(JSON.stringify(legacy.encode(ops)));
          expect(upgradeLegacyWire(stored)).toEqual(
            JSON.parse(JSON.stringify(current.encode(ops))),
          );
          log.push(stored);
        };
        flush();
        for (const st of steps) {
          if (st.kind >= 97) t.state = plain({ v: st.value });
          else if (st.kind === 96) t.rebase();
          else {
            const paths = containers(plain(t.state));
            mutate(at(t.state, paths[st.pick % paths.length] as (string | number)[]), st, false);
          }
          if (st.flush) flush();
        }
        flush();
        let from = log.length - 1;
        while ((log[from]?.[0] as unknown[] | undefined)?.[0] !== "r") from--;
        const dec = decoder();
        let replica: JsonValue = null;
        for (const stored of log.slice(from)) {
          replica = apply(replica, dec.decode(upgradeLegacyWire(stored)));
        }
        expect(replica).toEqual(plain(t.state));
      }),
      { seed: 8_0008, numRuns: 300 },
    );
  }, 60_000);
});
