import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvocationReplica } from "../../../src/client/index.ts";
import type { JsonValue, Op } from "../../../src/core/chord/types.ts";
import { emptyState } from "./fake-producer.ts";

function synced(): InvocationReplica {
  const replica = new InvocationReplica();
  const base = emptyState();
  base.content[0] = { type: "text", text: "hello\n" };
  base.details = { files: ["a"] };
  expect(replica.receive([["r", base as unknown as JsonValue]])).toEqual({ kind: "applied" });
  return replica;
}

describe("InvocationReplica", () => {
  it("keeps the last good state when a batch applies but breaks the state's shape", () => {
    const replica = synced();
    const before = structuredClone(replica.state);
    const outcome = replica.receive([["d", ["content"]]]);
    expect(outcome.kind).toBe("needs_base");
    expect(replica.state).toEqual(before);
    expect(replica.synced).toBe(false);
  });

  it("keeps the last good state when a content block becomes something else", () => {
    const replica = synced();
    const before = structuredClone(replica.state);
    expect(replica.receive([["s", ["content", 0], null]]).kind).toBe("needs_base");
    expect(replica.receive([["r", { content: [], truncation: {} }]]).kind).toBe("needs_base");
    expect(replica.state).toEqual(before);
  });

  it("folds a reorder, wire-encoded with a path id, without touching the state a view holds", () => {
    const replica = synced();
    expect(replica.receive([["s", ["details", "files"], ["a", "b", "c"]]]).kind).toBe("applied");
    const held = replica.state;
    const before = structuredClone(held);
    expect(
      replica.receive([
        ["#", 0, ["details", "files"]],
        ["m", 0, [2, 0, 1]],
      ]),
    ).toEqual({ kind: "applied" });
    expect(replica.state?.details).toEqual({ files: ["c", "a", "b"] });
    expect(held).toEqual(before);
    expect(replica.receive([["m", 0, [0, 1]]]).kind).toBe("needs_base");
    expect(replica.state?.details).toEqual({ files: ["c", "a", "b"] });
  });

  it("refuses a state the sink could never publish, with the same check the sink seeds with", () => {
    const replica = synced();
    const before = structuredClone(replica.state);
    const noFlag = replica.receive([["d", ["truncation", "lastLinePartial"]]]);
    expect(noFlag).toEqual({
      kind: "needs_base",
      reason:
        "the folded value is not a tool output state: truncation.lastLinePartial must be a boolean, got undefined.",
    });
    const huge = { ...emptyState(), details: "x".repeat(70_000) } as unknown as JsonValue;
    const big = replica.receive([["r", huge]]);
    expect(big.kind === "needs_base" && big.reason).toMatch(/details is 70002 bytes serialized/);
    expect(replica.state).toEqual(before);
  });

  it("does not let a refused batch alias or change the last good state (property)", () => {
    const seg = fc.constantFrom<string | number>(
      "content",
      "truncation",
      "details",
      "totalBytes",
      "text",
      "type",
      0,
      1,
    );
    const path = fc.array(seg, { minLength: 1, maxLength: 3 });
    const value: fc.Arbitrary<JsonValue> = fc.oneof(
      fc.constant(null),
      fc.string({ maxLength: 3 }),
      fc.integer({ min: 0, max: 9 }),
      fc.constant<JsonValue>({}),
      fc.constant<JsonValue>([]),
    );
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.tuple(fc.constant("s" as const), path, value),
      fc.tuple(fc.constant("d" as const), path),
      fc.tuple(fc.constant("a" as const), path, fc.string({ maxLength: 3 })),
      fc.tuple(fc.constant("t" as const), path, fc.integer({ min: 0, max: 3 })),
      fc.tuple(
        fc.constant("p" as const),
        path,
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 0, max: 1 }),
        fc.array(value, { maxLength: 2 }),
      ),
      fc.tuple(
        fc.constant("m" as const),
        fc.array(seg, { maxLength: 3 }),
        fc.constantFrom<number[]>([], [0], [0, 1], [1, 0], [2, 0, 1]),
      ),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 4 }), (ops) => {
        const replica = synced();
        const before = structuredClone(replica.state);
        const held = replica.state;
        const outcome = replica.receive(ops);
        // Whatever happened, the object a view held before is untouched.
        expect(held).toEqual(before);
        if (outcome.kind !== "applied") expect(replica.state).toEqual(before);
      }),
      { seed: 11, numRuns: 2000 },
    );
  });
});
