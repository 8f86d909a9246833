// Publications paced by their fan-out (decision 168): with many sockets the object
// publishes less often, and every subscriber still gets every publication, in order,
// and ends on the settled state. Real WebSockets to the real InvocationDO, its real
// SQLite batch log; the output is produced at its own pace (no forced flushes), so the
// pacing decides the publications.
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../../../src/core/events/types.ts";
import { connectSocket, startRequest, stubFor, textOf, value } from "./helpers.ts";

const bash = { name: "bash", input: { command: "make" } };

/** The `seq` of each `tool_update` a subscriber received, in arrival order. */
function seqsOf(events: HarnessEvent[]): number[] {
  return events.flatMap((e) => (e.type === "tool_update" ? [e.seq as number] : []));
}

async function fanOut(name: string, sockets: number, writes: number) {
  value(await stubFor(name).start(startRequest(name, "external", bash)));
  value(await stubFor(name).produce([{ write: "line 0\n" }]));
  await stubFor(name).flushOutput();
  const subs = [];
  for (let i = 0; i < sockets; i++) subs.push(await connectSocket(name));
  let expected = "line 0\n";
  for (let i = 1; i <= writes; i++) {
    value(await stubFor(name).produce([{ write: `line ${i}\n` }]));
    expected += `line ${i}\n`;
    await new Promise((r) => setTimeout(r, 5));
  }
  value(await stubFor(name).produce([], { isError: false }));
  const settled = value(await stubFor(name).result(10_000));
  if (settled.status !== "settled") throw new Error("not settled");
  expect(textOf(settled.result)).toBe(expected);
  for (const sub of subs) await sub.untilEnded();
  return { subs, expected };
}

describe("fan-out-aware pacing", () => {
  it("300 sockets each get every publication in order, the same as one another, and end on the settled output", async () => {
    const { subs, expected } = await fanOut("fanout-300", 300, 200);
    const first = seqsOf(subs[0]!.events);
    for (const sub of subs) {
      const seqs = seqsOf(sub.events);
      // The base, then each publication once, in the order of the log.
      expect(seqs).toEqual(first);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
      expect(sub.bases).toBe(1);
      expect(textOf(sub.state)).toBe(expected);
      expect(sub.events.at(-1)?.type).toBe("tool_end");
    }
  }, 120_000);

  it("one socket gets every publication in order and the whole output", async () => {
    const { subs, expected } = await fanOut("fanout-1", 1, 50);
    const seqs = seqsOf(subs[0]!.events);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
    expect(textOf(subs[0]!.state)).toBe(expected);
  }, 60_000);
});
