import { evictDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { expect, it } from "vitest";
import type { ToolUpdateEvent } from "../../../src/core/events/types.ts";
import { connectSocket, startRequest, stubFor, textOf, value, view } from "./helpers.ts";

type Step =
  | { kind: "write"; text: string }
  | { kind: "replace"; text: string }
  | { kind: "count"; n: number }
  | { kind: "flush" }
  | { kind: "reconnect" }
  | { kind: "evict" };

const text = fc
  .string({ unit: "grapheme", maxLength: 30 })
  .map((s) => (s.length % 3 === 0 ? `${s}\n` : s));
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: text.map((t) => ({ kind: "write" as const, text: t })) },
  { weight: 1, arbitrary: text.map((t) => ({ kind: "replace" as const, text: t })) },
  { weight: 2, arbitrary: fc.nat(1000).map((n) => ({ kind: "count" as const, n })) },
  { weight: 3, arbitrary: fc.constant({ kind: "flush" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "reconnect" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "evict" as const }) },
);

let run = 0;

it("random producer streams with reconnects that resume after the last seq, and evictions: the fold always equals the object's state and the result", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), async (steps) => {
      const name = `resume-prop-${run++}`;
      const stub = stubFor(name);
      value(await stub.start(startRequest(name, "external", { name: "t" })));
      let sub = await connectSocket(name);
      let model = "";
      /** The seq the reader's state is at: its last update's, or where it resumed from. */
      let resumedFrom: number | undefined;
      const lastSeq = () =>
        sub.events.filter((e): e is ToolUpdateEvent => e.type === "tool_update").at(-1)?.seq ??
        resumedFrom;
      for (const s of steps) {
        if (s.kind === "write") {
          value(await stub.produce([{ write: s.text }]));
          model += s.text;
        } else if (s.kind === "replace") {
          value(await stub.produce([{ replace: s.text }]));
          model = s.text;
        } else if (s.kind === "count") {
          value(await stub.produce([{ details: [["s", ["count"], s.n]] }]));
        } else {
          await stub.flushOutput();
          await sub.converge((await view(name)).state);
          // After eviction the next batch is a base: a reader resuming before it gets one.
          if (s.kind === "evict") await evictDurableObject(stub);
          if (s.kind === "reconnect") {
            const after = lastSeq();
            expect(after).toBeTypeOf("number");
            const held = sub.state;
            sub.socket.close();
            resumedFrom = after;
            const next = await connectSocket(name, `?after=${after}`);
            next.state = structuredClone(held);
            sub = next;
          }
        }
      }
      await stub.flushOutput();
      await sub.converge((await view(name)).state);
      // Every update a resumed connection got came after the seq it resumed from.
      const seqs = sub.events.flatMap((e) => (e.type === "tool_update" ? [e.seq ?? -1] : []));
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] ?? 0);
      value(await stub.produce([], { isError: false }));
      await sub.untilEnded();
      const poll = value(await stub.result(0));
      if (poll.status !== "settled") throw new Error("not settled");
      expect(textOf(poll.result)).toBe(model);
      expect(sub.state?.content).toEqual(poll.result.content);
      expect(sub.state?.details).toEqual(poll.result.details);
    }),
    { seed: 1111, numRuns: 25 },
  );
}, 120_000);
