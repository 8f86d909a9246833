import * as reference from "@earendil-works/chord/delta";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  decoder,
  encoder,
  type JsonValue,
  type Op,
  track,
  type WireOp,
} from "../../../src/core/chord/index.ts";
import { at, container, containers, mutate, plain, type Step, step } from "./mutations.ts";

/**
 * Wire-identical with the reference Chord (`@earendil-works/chord/delta`), both ways:
 * a stream its tracker and encoder produce is decoded and applied by ours, and a
 * stream ours produce is decoded and applied by the reference. Each batch crosses as
 * JSON text, as it would a socket or the batch log, and the replica must equal the
 * producer after every flush.
 */

/** What a stream is made of: where it starts, then steps, with a flush after some. */
const mutationStream = fc.record({
  start: container,
  steps: fc.array(step, { minLength: 20, maxLength: 50 }),
});

/** The calls a property needs from a producer, whichever implementation it is. */
interface Producer {
  /** The value as a program sees it (proxied). */
  readonly state: JsonValue;
  /** The value as plain JSON, for comparison. */
  current(): JsonValue;
  assign(value: JsonValue): void;
  rebase(): void;
  /** Ops since the last flush, encoded and sent as JSON text. */
  flush(): string;
  /**
   * Whether one object may be put at several indexes (`fill`, `copyWithin`). The
   * reference tracker (0.87.1) then publishes a later change to it at one index only
   * (e.g. `fill([])` then `state[0].push("")` sends `["p", [0], 0, 0, [""]]` while its
   * own value changed at both), so its streams fill with primitives and copy within
   * arrays of primitives only. Ours copies such values apart, so it takes every step.
   */
  readonly takesSharedObjects: boolean;
}

/** A consumer: decodes and applies each batch it receives. */
type Consumer = (text: string) => JsonValue;

function ours(initial: JsonValue): Producer {
  const t = track<JsonValue>(initial);
  const enc = encoder();
  return {
    get state() {
      return t.state;
    },
    current: () => plain(t.state),
    assign: (value) => {
      t.state = value;
    },
    rebase: () => t.rebase(),
    flush: () => JSON.stringify(enc.encode(t.flush())),
    takesSharedObjects: true,
  };
}

function theirs(initial: JsonValue): Producer {
  const t = reference.track(initial as object);
  const enc = reference.encoder();
  return {
    get state() {
      return t.state as JsonValue;
    },
    current: () => plain(t.target),
    assign: (value) => {
      t.state = value as object;
    },
    rebase: () => t.rebase(),
    flush: () => JSON.stringify(enc.encode(t.flush())),
    takesSharedObjects: false,
  };
}

/** `st` as the producer can take it (see `Producer.takesSharedObjects`); null to skip it. */
function fitted(producer: Producer, target: JsonValue, st: Step): Step | null {
  if (producer.takesSharedObjects || !Array.isArray(target)) return st;
  const sub = st.kind % 14;
  const isNode = (v: unknown) => typeof v === "object" && v !== null;
  if (sub === 9 && isNode(st.value)) return { ...st, value: st.str };
  if (sub === 10 && target.some(isNode)) return null;
  return st;
}

function ourConsumer(): Consumer {
  const dec = decoder();
  let replica: JsonValue = null;
  return (text) => {
    replica = apply(replica, dec.decode(JSON.parse(text) as unknown[]));
    return replica;
  };
}

function theirConsumer(): Consumer {
  const dec = reference.decoder();
  let replica: unknown;
  return (text) => {
    replica = reference.apply(replica, dec.decode(JSON.parse(text) as reference.WireOp[]));
    return plain(replica);
  };
}

/** Verbs seen on the wire over a whole run, to show what the streams exercised. */
type Seen = Map<string, number>;

function count(seen: Seen, text: string): void {
  for (const w of JSON.parse(text) as unknown[][]) {
    const verb = String(w[0]);
    seen.set(verb, (seen.get(verb) ?? 0) + 1);
  }
}

/** Drives `producer` through `steps`; after every flush the consumer's replica equals it. */
function run(producer: Producer, consume: Consumer, steps: Step[], seen: Seen): void {
  const flush = () => {
    const text = producer.flush();
    count(seen, text);
    expect(consume(text)).toEqual(producer.current());
  };
  flush();
  for (const st of steps) {
    if (st.kind >= 97) {
      producer.assign(plain(st.kind === 97 ? st.items : { v: st.value }));
    } else if (st.kind === 96) {
      producer.rebase();
    } else {
      const paths = containers(producer.current());
      const path = paths[st.pick % paths.length] as (string | number)[];
      const target = at(producer.state, path);
      const fit = fitted(producer, target, st);
      if (fit) mutate(target, fit, false);
    }
    if (st.flush) flush();
  }
  flush();
}

const RUNS = 1000;
/** A guard for a loaded machine (each property takes about 4 s alone), not a speed claim. */
const PROPERTY_TIMEOUT_MS = 60_000;

describe("wire-identical with the reference Chord", () => {
  it(
    "a stream the reference tracker and encoder produce decodes and applies here to the producer's value at every flush",
    () => {
      const seen: Seen = new Map();
      fc.assert(
        fc.property(mutationStream, ({ start, steps }) => {
          run(theirs(plain(start)), ourConsumer(), steps, seen);
        }),
        { seed: 8_0001, numRuns: RUNS },
      );
      // The streams used every verb the reference tracker emits, and ids across batches.
      for (const verb of ["r", "s", "d", "a", "t", "p", "#"]) {
        expect(seen.get(verb) ?? 0).toBeGreaterThan(50);
      }
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "a stream our tracker and encoder produce decodes and applies in the reference to the producer's value at every flush",
    () => {
      const seen: Seen = new Map();
      fc.assert(
        fc.property(mutationStream, ({ start, steps }) => {
          run(ours(plain(start)), theirConsumer(), steps, seen);
        }),
        { seed: 8_0002, numRuns: RUNS },
      );
      // Ours also sends "m" for a sort or reverse where it is the smaller form.
      for (const verb of ["r", "s", "d", "a", "t", "p", "m", "#"]) {
        expect(seen.get(verb) ?? 0).toBeGreaterThan(50);
      }
    },
    PROPERTY_TIMEOUT_MS,
  );

  it("a key the reference adds and removes within one flush arrives as a d that changes nothing here", () => {
    const t = reference.track<{ a?: number; b?: number }>({});
    const dec = decoder();
    let replica = apply(null, dec.decode(reference.encoder().encode(t.flush()) as unknown[]));
    t.state.b = 1;
    delete t.state.b;
    t.state.a = 2;
    const ops = dec.decode(JSON.parse(JSON.stringify(reference.encoder().encode(t.flush()))));
    expect(ops).toContainEqual(["d", ["b"]]);
    replica = apply(replica, ops);
    expect(replica).toEqual({ a: 2 });
  });

  it("a reorder encoded by the reference, ids and short forms included, decodes here to the same ops", () => {
    const batch = fc.array(
      fc.tuple(
        fc.constantFrom<(string | number)[]>([], ["xs"], ["a", 0], ["xs"]),
        fc.array(fc.nat(), { maxLength: 6 }),
      ),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(fc.array(batch, { minLength: 1, maxLength: 6 }), (batches) => {
        const enc = reference.encoder();
        const dec = decoder();
        for (const b of batches) {
          // A random permutation of each length: sort indexes by the random keys.
          const ops: Op[] = b.map(([path, keys]) => [
            "m",
            path,
            keys.map((_, i) => i).sort((x, y) => (keys[x] as number) - (keys[y] as number)),
          ]);
          const wire = JSON.parse(JSON.stringify(enc.encode(ops as reference.Op[])));
          expect(dec.decode(wire)).toEqual(ops);
        }
      }),
      { seed: 8_0003, numRuns: 300 },
    );
  });

  it("a reorder encoded here decodes in the reference to the same ops, and both appliers agree", () => {
    const enc = encoder();
    const dec = reference.decoder();
    const batches: Op[][] = [
      [["r", { xs: ["a", "b", "c"], ys: [1, 2] }]],
      [["m", ["xs"], [2, 0, 1]]],
      [
        ["m", ["xs"], [1, 2, 0]],
        ["m", ["xs"], [0, 2, 1]],
        ["m", ["ys"], [1, 0]],
      ],
      [
        ["m", ["ys"], [1, 0]],
        ["m", ["xs"], [2, 1, 0]],
      ],
    ];
    let here: JsonValue = null;
    let there: unknown;
    for (const ops of batches) {
      const wire: WireOp[] = JSON.parse(JSON.stringify(enc.encode(ops)));
      const decoded = dec.decode(wire as reference.WireOp[]);
      expect(decoded).toEqual(ops);
      here = apply(here, ops);
      there = reference.apply(there, decoded);
      expect(there).toEqual(here);
    }
    expect(here).toEqual({ xs: ["b", "c", "a"], ys: [1, 2] });
  });
});
