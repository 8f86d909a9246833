import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { REBASE_EVERY } from "../../../durable-objects/invocation/output/durable-output.ts";
import type { ToolUpdateEvent } from "../../../src/core/events/types.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import {
  connectSocket,
  openEvents,
  Subscriber,
  startRequest,
  stubFor,
  textOf,
  value,
  view,
  waitFor,
} from "./helpers.ts";

/** An external invocation with `bodies` publications of one line each, every one flushed. */
async function published(name: string, bodies: number, from = 0) {
  const stub = stubFor(name);
  if (from === 0) value(await stub.start(startRequest(name, "external", { name: "resume" })));
  // from > 0: the invocation was started by the caller.
  for (let i = from; i < from + bodies; i++) {
    value(await stub.produce([{ write: `line ${i}\n` }]));
    await stub.flushOutput();
  }
  return stub;
}

/** Seqs of the newest base and the newest batch in the log. */
async function logEnds(name: string): Promise<{ base: number; last: number }> {
  return runInDurableObject(stubFor(name), (_instance, state) => {
    const sql = state.storage.sql;
    const base = sql
      .exec<{ seq: number }>("SELECT MAX(seq) AS seq FROM batches WHERE tag = 'base'")
      .one().seq;
    const last = sql.exec<{ seq: number }>("SELECT MAX(seq) AS seq FROM batches").one().seq;
    return { base, last };
  });
}

/**
 * A run of `bodies` publications followed from its start by one SSE reader: the state
 * that reader held after each event id.
 */
async function followedRun(name: string, bodies: number): Promise<Map<number, ToolOutputState>> {
  const stub = stubFor(name);
  value(await stub.start(startRequest(name, "external", { name: "resume" })));
  const follower = await openEvents(name);
  await published(name, bodies, 1);
  await follower.sub.converge((await view(name)).state);
  const replay = new Subscriber();
  const states = new Map<number, ToolOutputState>();
  follower.sub.events.forEach((event, i) => {
    replay.receive(JSON.stringify(event));
    if (event.type === "tool_update" && replay.state)
      states.set(follower.ids[i] ?? -1, structuredClone(replay.state));
  });
  return states;
}

function updates(sub: Subscriber): ToolUpdateEvent[] {
  return sub.events.filter((e): e is ToolUpdateEvent => e.type === "tool_update");
}

describe("resuming after an event id", () => {
  it("SSE with Last-Event-ID: the batches after it, no base, and the same final state", async () => {
    const name = "resume-sse";
    const states = await followedRun(name, 10);
    const { last } = await logEnds(name);
    const at = last - 4;
    const held = states.get(at);
    expect(held).toBeDefined();
    const sub = new Subscriber();
    sub.state = structuredClone(held ?? null);
    const resumed = await openEvents(name, {
      headers: { "Last-Event-ID": String(at) },
      greeting: 5,
      sub,
    });
    expect(sub.bases).toBe(0);
    expect(resumed.ids).toEqual([at, at + 1, at + 2, at + 3, at + 4]);
    expect(sub.state).toEqual((await view(name)).state);
    // Live deltas keep coming on the resumed stream.
    await published(name, 2, 11);
    await sub.converge((await view(name)).state);
    expect(textOf(sub.state)).toContain("line 11\n");
    expect(sub.bases).toBe(0);
  });

  it("socket with ?after=: the batches after it with their seq, no base", async () => {
    const name = "resume-socket";
    const states = await followedRun(name, 6);
    const { last } = await logEnds(name);
    const first = await connectSocket(name);
    await waitFor("greeting", () => (first.events.length >= 2 ? true : undefined));
    expect(updates(first)[0]?.seq).toBe(last);
    first.socket.close();
    const sub = Object.assign(await connectSocket(name, `?after=${last - 2}`), {});
    sub.state = structuredClone(states.get(last - 2) ?? null);
    await waitFor("resumed batches", () => (updates(sub).length >= 2 ? true : undefined));
    expect(updates(sub).map((u) => u.seq)).toEqual([last - 1, last]);
    expect(sub.bases).toBe(0);
    expect(sub.state).toEqual((await view(name)).state);
    await published(name, 1, 7);
    await sub.converge((await view(name)).state);
    expect(updates(sub).at(-1)?.seq).toBe(last + 1);
    sub.socket.close();
  });

  it("resumes at the newest base and after it; one before it, or past the newest batch, gets a base", {
    timeout: 30_000,
  }, async () => {
    const name = "resume-limits";
    const states = await followedRun(name, REBASE_EVERY + 5);
    const { base, last } = await logEnds(name);
    expect(base).toBeGreaterThan(1);
    const cases: [string, number, number][] = [
      ["just under the newest base", base - 1, 1],
      ["at the newest base", base, 0],
      ["just over the newest base", base + 1, 0],
      ["at the newest batch", last, 0],
      ["just over the newest batch", last + 1, 1],
    ];
    for (const [label, after, bases] of cases) {
      const held = new Subscriber();
      held.state = structuredClone(states.get(after) ?? null);
      const { sub, ids } = await openEvents(name, {
        headers: { "Last-Event-ID": String(after) },
        greeting: 1,
        sub: held,
      });
      const expected = bases === 1 ? 1 : last - after;
      await waitFor(label, () => (updates(sub).length >= expected ? true : undefined));
      expect(sub.bases, label).toBe(bases);
      expect(updates(sub), label).toHaveLength(expected);
      expect(ids.at(-1), label).toBe(bases === 1 || after < last ? last : after);
    }
  });

  it("sends a base instead when the batches after the id would be no smaller than one", async () => {
    const name = "resume-heavy";
    const states = await followedRun(name, 2);
    const stub = stubFor(name);
    const { last: quiet } = await logEnds(name);
    // Three 20 KB details rewrites: each delta carries 20 KB, the state holds one.
    for (const fill of ["a", "b", "c"]) {
      value(await stub.produce([{ details: [["s", ["blob"], fill.repeat(20_000)]] }]));
      await stub.flushOutput();
    }
    const { last } = await logEnds(name);
    const stateSize = JSON.stringify((await view(name)).state).length;
    expect(stateSize).toBeLessThan(3 * 20_000);
    const heavy = new Subscriber();
    heavy.state = structuredClone(states.get(quiet) ?? null);
    const behind = await openEvents(name, {
      headers: { "Last-Event-ID": String(quiet) },
      sub: heavy,
    });
    expect(heavy.bases).toBe(1);
    expect(behind.ids).toEqual([0, last]);
    // One rewrite behind is still cheaper as a delta than as a base.
    const light = new Subscriber();
    const { sub } = await openEvents(name);
    light.state = structuredClone(sub.state);
    value(await stub.produce([{ details: [["s", ["blob"], "d".repeat(20_000)]] }]));
    await stub.flushOutput();
    const resumed = await openEvents(name, {
      headers: { "Last-Event-ID": String(last) },
      sub: light,
    });
    expect(light.bases).toBe(0);
    expect(resumed.ids).toEqual([last, last + 1]);
    expect(light.state).toEqual((await view(name)).state);
  });

  it("ignores an id that is not a plain non-negative integer: a base, as for a new reader", async () => {
    const name = "resume-bad-id";
    await published(name, 3);
    for (const bad of ["abc", "-1", "1.5", "", "1e3", "99999999999999999"]) {
      const { sub } = await openEvents(name, { headers: { "Last-Event-ID": bad } });
      expect(sub.bases, bad).toBe(1);
    }
    const viaQuery = await connectSocket(name, "?after=x");
    await waitFor("base", () => (viaQuery.bases === 1 ? true : undefined));
    viaQuery.socket.close();
  });

  it("resumes after eviction from the log (the new instance's first batch is a base), and gives a settled invocation's base and end", async () => {
    const name = "resume-evict";
    const stub = await published(name, 4);
    // Enough output that two one-line deltas are smaller than a base of it.
    value(await stub.produce([{ write: `${"x".repeat(2000)}\n` }]));
    await stub.flushOutput();
    const { last } = await logEnds(name);
    await evictDurableObject(stub);
    const follower = await openEvents(name);
    await published(name, 3, 4);
    await follower.sub.converge((await view(name)).state);
    // A sink rebuilt after eviction starts with a base: ids before it cannot resume.
    expect((await logEnds(name)).base).toBe(last + 1);
    const before = await openEvents(name, { headers: { "Last-Event-ID": String(last) } });
    expect(before.sub.bases).toBe(1);
    const replay = new Subscriber();
    for (const [i, event] of follower.sub.events.entries()) {
      replay.receive(JSON.stringify(event));
      if (follower.ids[i] === last + 1) break;
    }
    const sub = new Subscriber();
    sub.state = structuredClone(replay.state);
    const resumed = await openEvents(name, {
      headers: { "Last-Event-ID": String(last + 1) },
      greeting: 3,
      sub,
    });
    expect(resumed.ids).toEqual([last + 1, last + 2, last + 3]);
    expect(sub.bases).toBe(0);
    expect(sub.state).toEqual((await view(name)).state);
    value(await stubFor(name).produce([], { isError: false }));
    const settled = await openEvents(name, { headers: { "Last-Event-ID": String(last) } });
    await settled.finished;
    expect(settled.sub.bases).toBe(1);
    expect(settled.sub.ended).toBe(true);
  });
});
