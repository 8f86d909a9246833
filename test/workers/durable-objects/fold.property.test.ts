import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { expect, it } from "vitest";
import type { TestInvocationDO as InvocationDO } from "../test-invocation-do.ts";
import { connectSocket, startRequest, stubFor, textOf, value, view } from "./helpers.ts";

type Step =
  | { kind: "write"; text: string }
  | { kind: "replace"; text: string }
  | { kind: "count"; n: number }
  | { kind: "flush" }
  | { kind: "evict" };

const text = fc
  .string({ unit: "grapheme", maxLength: 30 })
  .map((s) => (s.length % 3 === 0 ? `${s}\n` : s));
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: text.map((t) => ({ kind: "write" as const, text: t })) },
  { weight: 1, arbitrary: text.map((t) => ({ kind: "replace" as const, text: t })) },
  { weight: 2, arbitrary: fc.nat(1000).map((n) => ({ kind: "count" as const, n })) },
  { weight: 3, arbitrary: fc.constant({ kind: "flush" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "evict" as const }) },
);

let run = 0;

it("random producer streams with evictions: subscriber fold, recovered state and result all agree with the model", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), async (steps) => {
      const name = `fold-${run++}`;
      const stub = stubFor(name);
      value(await stub.start(startRequest(name, "external", { name: "t" })));
      const sub = await connectSocket(name);
      let model = "";
      let count: number | undefined;
      for (const s of steps) {
        if (s.kind === "write") {
          value(await stub.produce([{ write: s.text }]));
          model += s.text;
        } else if (s.kind === "replace") {
          value(await stub.produce([{ replace: s.text }]));
          model = s.text;
        } else if (s.kind === "count") {
          value(await stub.produce([{ details: [["s", ["count"], s.n]] }]));
          count = s.n;
        } else if (s.kind === "flush") {
          await stub.flushOutput();
          await sub.converge((await view(name)).state);
        } else {
          await stub.flushOutput();
          await sub.converge((await view(name)).state);
          await evictDurableObject(stub);
          const replayed = await runInDurableObject(stub, (i: InvocationDO) => i.recovery.batches);
          expect(replayed).toBeLessThanOrEqual(50);
          expect((await view(name)).state).toEqual(sub.state);
        }
      }
      value(await stub.produce([], { isError: false }));
      await sub.untilEnded();
      const poll = value(await stub.result(0));
      if (poll.status !== "settled") throw new Error("not settled");
      expect(textOf(poll.result)).toBe(model);
      expect(poll.result.details).toEqual(count === undefined ? {} : { count });
      expect(sub.state?.content).toEqual(poll.result.content);
      expect(sub.state?.details).toEqual(poll.result.details);
    }),
    { seed: 42, numRuns: 25 },
  );
}, 120_000);
