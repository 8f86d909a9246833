import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  decoder,
  encoder,
  isBase,
  type JsonObject,
  type JsonValue,
  type Op,
  track,
} from "../../../src/core/chord/index.ts";
import { at, container, containers, isObject, mutate, plain, step, text } from "./mutations.ts";

/** A consumer of the stream: its own encoder (producer side), decoder and replica. */
interface Consumer {
  enc: ReturnType<typeof encoder>;
  dec: ReturnType<typeof decoder>;
  replica: JsonValue;
  /** Every wire batch it received, as a durable log would hold them. */
  log: unknown[][];
}

function deliver(c: Consumer, ops: Op[]): void {
  const wire = JSON.parse(JSON.stringify(c.enc.encode(ops)));
  c.log.push(wire);
  c.replica = apply(c.replica, c.dec.decode(wire));
}

/** One producer, any number of consumers: tracker → encoder → JSON → decoder → apply. */
function stream<T>(initial: T & JsonValue) {
  const tracker = track<JsonValue>(initial);
  const consumers: Consumer[] = [{ enc: encoder(), dec: decoder(), replica: null, log: [] }];
  const sync = (): Op[] => {
    const ops = tracker.flush();
    const now = plain(tracker.state);
    for (const c of consumers) {
      deliver(c, ops);
      expect(c.replica).toEqual(now);
    }
    return ops;
  };
  /** A consumer joining now starts from a base of the state just flushed. */
  const join = (): void => {
    const c: Consumer = { enc: encoder(), dec: decoder(), replica: null, log: [] };
    deliver(c, [["r", plain(tracker.state)]]);
    consumers.push(c);
  };
  /** A fresh decoder folding the first consumer's log from its last base batch. */
  const recover = (): JsonValue => {
    const log = (consumers[0] as Consumer).log;
    let start = log.length - 1;
    while (start > 0 && (log[start]?.[0] as unknown[] | undefined)?.[0] !== "r") start--;
    const dec = decoder();
    let replica: JsonValue = null;
    for (const wire of log.slice(start)) replica = apply(replica, dec.decode(wire));
    return replica;
  };
  return { tracker, sync, join, recover, replica: () => (consumers[0] as Consumer).replica };
}

/** Mutates `draft` in place, the way a program would, until it equals `target`. */
function morph(draft: JsonValue, target: JsonValue): void {
  if (Array.isArray(draft) && Array.isArray(target)) {
    if (draft.length > target.length) draft.length = target.length;
    for (let i = 0; i < draft.length; i++) morphSlot(draft, i, target[i] as JsonValue);
    if (target.length > draft.length) draft.push(...target.slice(draft.length));
    return;
  }
  const d = draft as JsonObject;
  const t = target as JsonObject;
  for (const k of Object.keys(d)) if (!Object.hasOwn(t, k)) delete d[k];
  for (const k of Object.keys(t)) morphSlot(d, k, t[k] as JsonValue);
}

function morphSlot(parent: JsonValue, k: string | number, next: JsonValue): void {
  const p = parent as Record<string | number, JsonValue>;
  const cur = p[k];
  const sameKind = (Array.isArray(cur) && Array.isArray(next)) || (isObject(cur) && isObject(next));
  if (sameKind) morph(cur as JsonValue, next);
  else p[k] = next;
}

describe("replica equals producer", () => {
  it("for random JSON before/after pairs", () => {
    fc.assert(
      fc.property(container, container, (before, after) => {
        const s = stream(plain(before));
        s.sync();
        if (Array.isArray(before) === Array.isArray(after)) morph(s.tracker.state, plain(after));
        else s.tracker.state = plain(after);
        const ops = s.sync();
        expect(s.replica()).toEqual(plain(after));
        // Only a state assignment, or a root array replaced wholesale, is a base.
        if (Array.isArray(before) !== Array.isArray(after)) expect(isBase(ops)).toBe(true);
        else if (!Array.isArray(after)) expect(isBase(ops)).toBe(false);
      }),
      { seed: 20261129, numRuns: 3000 },
    );
  });

  it("for random text before/after pairs, related and unrelated", () => {
    const pair = fc.oneof(
      fc.tuple(text, text),
      fc.tuple(text, fc.nat(30), text).map(([s, k, x]) => [s, s.slice(k) + x] as const),
      fc.tuple(text, text).map(([s, x]) => [s, s + x] as const),
    );
    fc.assert(
      fc.property(pair, ([before, after]) => {
        const s = stream({ text: before });
        s.sync();
        (s.tracker.state as { text: string }).text = after;
        const ops = s.sync();
        expect(ops.length).toBeLessThanOrEqual(2);
        if (after.startsWith(before) && after !== before)
          expect(ops).toEqual([["a", ["text"], after.slice(before.length)]]);
      }),
      { seed: 7, numRuns: 3000 },
    );
  });
});

describe("random mutation sequences", () => {
  it("keep every replica, late joiners included, equal to the producer at every flush, and recover from the last base", () => {
    fc.assert(
      fc.property(container, fc.array(step, { minLength: 60, maxLength: 90 }), (start, steps) => {
        const initial = plain(start);
        const s = stream(initial);
        let model = plain(initial);
        let baseline = plain(initial);
        const sync = () => {
          s.sync();
          expect(plain(s.tracker.state)).toEqual(model);
          baseline = plain(model);
        };
        let joined = 0;
        sync();
        for (const st of steps) {
          if (st.kind >= 97) {
            const next = plain(
              Array.isArray(st.items) && st.kind === 97 ? st.items : { v: st.value },
            );
            s.tracker.state = next;
            model = plain(next);
          } else if (st.kind === 96) {
            s.tracker.rebase();
          } else if (st.kind === 95) {
            s.tracker.discard();
            model = plain(baseline);
          } else {
            const paths = containers(model);
            const path = paths[st.pick % paths.length] as (string | number)[];
            mutate(at(s.tracker.state, path), st, false);
            mutate(at(model, path), st, true);
            // fill and copyWithin share references in a plain array; the tracker copies.
            model = plain(model);
          }
          if (st.flush) {
            sync();
            if (st.kind % 10 === 0 && joined < 3) {
              s.join();
              joined++;
            }
          }
        }
        sync();
        expect(s.recover()).toEqual(model);
      }),
      { seed: 424242, numRuns: 120 },
    );
  });
});
