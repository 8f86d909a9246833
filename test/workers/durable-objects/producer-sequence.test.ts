import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { InvocationView, Outcome } from "../../../src/protocol/index.ts";
import { startRequest, stubFor, textOf, value, view } from "./helpers.ts";

async function external(name: string) {
  const stub = stubFor(name);
  value(await stub.start(startRequest(name, "external", { name: "agent_tool" })));
  return stub;
}

function refusal(outcome: Outcome<InvocationView>): { code: string; message: string } {
  if (outcome.ok) throw new Error("expected a refusal, got ok");
  return { code: outcome.error.code, message: outcome.error.message };
}

describe("idempotent producer calls (seq)", () => {
  it("applies 0, 1, 2 in order; a repeat of the last gets the same answer and applies nothing", async () => {
    const stub = await external("seq-order");
    const answers: InvocationView[] = [];
    for (const [seq, line] of ["a", "b", "c"].entries()) {
      answers.push(value(await stub.produce([{ write: `${line}\n` }], undefined, seq)));
    }
    // Each answer already holds its own write: a sequenced call is published at once.
    expect(answers.map((a) => textOf(a.state))).toEqual(["a\n", "a\nb\n", "a\nb\nc\n"]);
    const again = value(await stub.produce([{ write: "c\n" }], undefined, 2));
    expect(again).toEqual(answers[2]);
    expect(textOf((await view("seq-order")).state)).toBe("a\nb\nc\n");
  });

  it("refuses just under (older) and just over (gap) the expected seq with a 409 naming it", async () => {
    const stub = await external("seq-limits");
    expect(refusal(await stub.produce([{ write: "x" }], undefined, 1))).toEqual({
      code: "conflict",
      message: "seq 1 leaves a gap: the expected seq is 0. Nothing of this body was applied.",
    });
    value(await stub.produce([{ write: "0" }], undefined, 0));
    value(await stub.produce([{ write: "1" }], undefined, 1));
    value(await stub.produce([{ write: "2" }], undefined, 2));
    const older = refusal(await stub.produce([{ write: "1" }], undefined, 1));
    expect(older.code).toBe("conflict");
    expect(older.message).toContain(
      "seq 1 is older than the last accepted one: the expected seq is 3",
    );
    const gap = refusal(await stub.produce([{ write: "4" }], undefined, 4));
    expect(gap.message).toContain("seq 4 leaves a gap: the expected seq is 3");
    expect(textOf((await view("seq-limits")).state)).toBe("012");
    value(await stub.produce([{ write: "3" }], undefined, 3));
    expect(textOf((await view("seq-limits")).state)).toBe("0123");
  });

  it("refuses the last seq with another body: a retry must repeat the body exactly", async () => {
    const stub = await external("seq-other-body");
    value(await stub.produce([{ write: "one\n" }], undefined, 0));
    const other = refusal(await stub.produce([{ write: "two\n" }], undefined, 0));
    expect(other.code).toBe("conflict");
    expect(other.message).toContain("seq 0 was already accepted with another body");
    expect(other.message).toContain("The next body takes seq 1");
    // The same calls with an end marker are another body too.
    const ended = refusal(await stub.produce([{ write: "one\n" }], { isError: false }, 0));
    expect(ended.code).toBe("conflict");
    expect(textOf((await view("seq-other-body")).state)).toBe("one\n");
  });

  it("answers a retry as the first time even after later unsequenced writes changed the state", async () => {
    const stub = await external("seq-stored-answer");
    const first = value(await stub.produce([{ write: "seq\n" }], undefined, 0));
    value(await stub.produce([{ write: "unsequenced\n" }]));
    await stub.flushOutput();
    expect(value(await stub.produce([{ write: "seq\n" }], undefined, 0))).toEqual(first);
    expect(textOf((await view("seq-stored-answer")).state)).toBe("seq\nunsequenced\n");
  });

  it("keeps the accepted seq and its answer across eviction, stored with the batch it produced", async () => {
    const name = "seq-evict";
    const stub = await external(name);
    const first = value(await stub.produce([{ write: "kept\n" }], undefined, 0));
    const stored = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const seq = sql.exec<{ seq: number }>("SELECT seq FROM producer_seq").one().seq;
      const newest = sql.exec<{ seq: number }>("SELECT MAX(seq) AS seq FROM batches").one().seq;
      return { seq, newest };
    });
    expect(stored.seq).toBe(0);
    expect(stored.newest).toBeGreaterThan(0);
    await evictDurableObject(stub);
    const retried = value(await stubFor(name).produce([{ write: "kept\n" }], undefined, 0));
    expect(retried).toEqual(first);
    expect(textOf((await view(name)).state)).toBe("kept\n");
    const gap = refusal(await stubFor(name).produce([{ write: "x" }], undefined, 2));
    expect(gap.message).toContain("the expected seq is 1");
    value(await stubFor(name).produce([{ write: "next\n" }], undefined, 1));
    expect(textOf((await view(name)).state)).toBe("kept\nnext\n");
  });

  it("answers a retry of the ending body with the settled view, not 'already ended'", async () => {
    const name = "seq-end";
    const stub = await external(name);
    value(await stub.produce([{ write: "body\n" }], undefined, 0));
    const ended = value(await stub.produce([{ write: "done\n" }], { isError: false }, 1));
    expect(ended.status).toBe("settled");
    expect(textOf(ended.state)).toBe("body\ndone\n");
    await evictDurableObject(stubFor(name));
    expect(
      value(await stubFor(name).produce([{ write: "done\n" }], { isError: false }, 1)),
    ).toEqual(ended);
    const after = refusal(await stubFor(name).produce([{ write: "late\n" }], undefined, 2));
    expect(after).toEqual({
      code: "conflict",
      message: "Invocation already ended; no more output is accepted.",
    });
    const result = value(await stubFor(name).result(0));
    expect(result.status === "settled" && textOf(result.result)).toBe("body\ndone\n");
  });

  it("applies a body once when two copies of it arrive at the same time", async () => {
    const stub = await external("seq-concurrent");
    const [a, b] = await Promise.all([
      stub.produce([{ write: "once\n" }], undefined, 0),
      stub.produce([{ write: "once\n" }], undefined, 0),
    ]);
    expect(value(a)).toEqual(value(b));
    const [c, d] = await Promise.all([
      stub.produce([{ write: "x\n" }], undefined, 1),
      stub.produce([{ write: "y\n" }], undefined, 1),
    ]);
    expect([c.ok, d.ok].sort()).toEqual([false, true]);
    const text = textOf((await view("seq-concurrent")).state);
    expect(["once\nx\n", "once\ny\n"]).toContain(text);
  });

  it("leaves bodies without seq as before, and a refused body applies nothing and keeps the seq", async () => {
    const stub = await external("seq-mixed");
    value(await stub.produce([{ write: "a" }]));
    value(await stub.produce([{ write: "a" }]));
    value(await stub.produce([{ write: "b" }], undefined, 0));
    const bad = await stub.produce([{ write: "c" }, { usage: { input: -1 } }], undefined, 1);
    expect(refusal(bad).code).toBe("bad_request");
    value(await stub.produce([{ write: "c" }], undefined, 1));
    await stub.flushOutput();
    expect(textOf((await view("seq-mixed")).state)).toBe("aabc");
  });
});
