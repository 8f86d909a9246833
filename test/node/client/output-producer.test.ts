import { describe, expect, it } from "vitest";
import type { InvocationInfo } from "../../../src/client/index.ts";
import { OutputProducer, ToolwireError } from "../../../src/client/index.ts";
import type { ProducerCall } from "../../../src/core/output/types.ts";

const info = (seq: number) => ({ id: "x", seq }) as unknown as InvocationInfo;
const lost = () => new ToolwireError("unreachable", "connection reset", 0);
const fast = { initialMs: 1, maxMs: 2 };

describe("OutputProducer", () => {
  it("numbers bodies from 0 (or firstSeq) and retries a lost answer under the same seq", async () => {
    const sent: [string, number][] = [];
    let failNext = true;
    const out = new OutputProducer(
      async (calls, _end, seq) => {
        sent.push([(calls[0] as { write: string }).write, seq]);
        failNext = !failNext;
        if (!failNext) throw lost();
        return info(seq);
      },
      { retry: fast },
    );
    await out.send([{ write: "a" }]);
    await out.send([{ write: "b" }]);
    expect(sent).toEqual([
      ["a", 0],
      ["a", 0],
      ["b", 1],
      ["b", 1],
    ]);
    expect(out.nextSeq).toBe(2);
    const later = new OutputProducer(async (_c, _e, seq) => info(seq), { firstSeq: 7 });
    await later.send([]);
    expect(later.nextSeq).toBe(8);
  });

  it("sends concurrent bodies one after the other, in call order", async () => {
    const order: number[] = [];
    const out = new OutputProducer(async (_calls, _end, seq) => {
      await new Promise((resolve) => setTimeout(resolve, 5 - seq));
      order.push(seq);
      return info(seq);
    });
    const writes: ProducerCall[][] = [0, 1, 2, 3].map((i) => [{ write: String(i) }]);
    await Promise.all(writes.map((calls) => out.send(calls)));
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it("throws a refusal at once and keeps the seq: nothing of that body was applied", async () => {
    let attempts = 0;
    const out = new OutputProducer(async () => {
      attempts++;
      throw new ToolwireError("conflict", "seq 0 leaves a gap", 409);
    });
    await expect(out.send([{ write: "x" }])).rejects.toMatchObject({ code: "conflict" });
    expect(attempts).toBe(1);
    expect(out.nextSeq).toBe(0);
  });

  it("gives up after maxAttempts (just at the limit), keeping the seq for a resend", async () => {
    for (const maxAttempts of [1, 2, 3]) {
      let attempts = 0;
      const out = new OutputProducer(
        async () => {
          attempts++;
          throw lost();
        },
        { retry: { ...fast, maxAttempts } },
      );
      await expect(out.send([{ write: "x" }])).rejects.toMatchObject({ code: "unreachable" });
      expect(attempts).toBe(maxAttempts);
      expect(out.nextSeq).toBe(0);
    }
    // One success on the last allowed attempt is enough.
    let attempts = 0;
    const out = new OutputProducer(
      async (_c, _e, seq) => {
        if (++attempts < 3) throw lost();
        return info(seq);
      },
      { retry: { ...fast, maxAttempts: 3 } },
    );
    await out.send([]);
    expect(out.nextSeq).toBe(1);
  });
});
