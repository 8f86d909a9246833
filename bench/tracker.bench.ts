/**
 * The tracker against the reference Chord (`@earendil-works/chord/delta`, the library this
 * one is wire-compatible with), same process, same inputs, same mutations (issue 16,
 * item 4). Each case mutates a tracked state and flushes; time is the median over rounds
 * of µs per flush, rounds interleaved between the two trackers so that load drifting
 * during the run moves both alike; "reference ÷ ours" is the median over rounds of the
 * ratio of the reference's round to ours next to it. Both trackers' ops are checked to
 * bring a replica to the same value before timing starts.
 *
 * `node bench/run.ts tracker`
 */

import { loadavg } from "node:os";
import * as reference from "@earendil-works/chord/delta";
import { apply, type JsonValue, type Op, type Tracker, track } from "../src/core/chord/index.ts";
import { makeText } from "./log-text.ts";

interface Doc {
  content: { type: "text"; text: string }[];
  details: { step: number; lines: number; bytes: number };
  terminate: boolean;
}
interface Transcript {
  messages: { role: string; content: string }[];
}

/** One case: a starting state and the k-th mutation of it. */
interface Case<S> {
  name: string;
  initial: () => S;
  mutate: (draft: S, k: number) => void;
  /** Ours makes the change this way instead (the same change, told to the tracker). */
  oursMutate?: (t: Tracker<S>, k: number) => void;
  /** Done by the producer after the mutation, outside the timing (e.g. reading the text). */
  untimed?: (draft: S) => void;
  iterations: number;
}

/** The calls a case needs from a tracker, whichever implementation it is. */
interface Flushing<S> {
  state: S;
  flush(): unknown[];
}

const ROUNDS = 15;
const WARM_UP_ROUNDS = 2;

function oursOf<S>(initial: S): Flushing<S> {
  return track(initial as JsonValue) as unknown as Flushing<S>;
}
function theirsOf<S>(initial: S): Flushing<S> {
  return reference.track(initial as object) as unknown as Flushing<S>;
}

/** Both trackers' ops for the first few mutations bring a replica to the producer's value. */
function checkSameValues<S>(c: Case<S>): void {
  for (const make of [oursOf, theirsOf]) {
    const t = make(c.initial());
    let replica: JsonValue = apply(null, t.flush() as Op[]);
    for (let k = 0; k < 20; k++) {
      mutation(c, t, make === oursOf)(k);
      replica = apply(replica, t.flush() as Op[]);
    }
    if (JSON.stringify(replica) !== JSON.stringify(t.state)) {
      throw new Error(`${c.name}: a replica of ${make.name} does not follow its producer`);
    }
  }
}

interface Result {
  name: string;
  ours: number;
  theirs: number;
  ratio: number;
}

/** The k-th mutation of `c` on tracker `t`, as ours or the reference makes it. */
function mutation<S>(c: Case<S>, t: Flushing<S>, isOurs: boolean): (k: number) => void {
  const oursMutate = c.oursMutate;
  if (isOurs && oursMutate) return (k) => oursMutate(t as unknown as Tracker<S>, k);
  return (k) => c.mutate(t.state, k);
}

function measure<S>(c: Case<S>): Result {
  checkSameValues(c);
  const trackers = [oursOf(c.initial()), theirsOf(c.initial())];
  for (const t of trackers) t.flush();
  const mutations = trackers.map((t, i) => mutation(c, t, i === 0));
  const steps = [0, 0];
  const rounds: number[][] = [[], []];
  let sinkHole = 0;
  for (let round = 0; round < WARM_UP_ROUNDS + ROUNDS; round++) {
    trackers.forEach((t, i) => {
      let excluded = 0;
      const start = performance.now();
      for (let n = 0; n < c.iterations; n++) {
        mutations[i]!(steps[i]!++);
        if (c.untimed) {
          const from = performance.now();
          c.untimed(t.state);
          excluded += performance.now() - from;
        }
        sinkHole += t.flush().length;
      }
      const us = ((performance.now() - start - excluded) * 1000) / c.iterations;
      if (round >= WARM_UP_ROUNDS) rounds[i]!.push(us);
    });
  }
  if (sinkHole < 0) console.log(sinkHole);
  const median = (xs: number[]): number =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const [ours, theirs] = rounds as [number[], number[]];
  return {
    name: c.name,
    ours: median(ours),
    theirs: median(theirs),
    ratio: median(theirs.map((us, i) => us / ours[i]!)),
  };
}

/** Precomputed chunks so text generation is not timed. */
function chunks(count: number, size: number): string[] {
  return Array.from({ length: count }, (_, i) => makeText(size, 1000 + i));
}

function doc(text: string): Doc {
  return {
    content: [{ type: "text", text }],
    details: { step: 0, lines: 0, bytes: 0 },
    terminate: false,
  };
}

const pieces8 = chunks(512, 8);
const pieces32 = chunks(512, 32);
const replies = chunks(256, 400);

const cases: Case<Doc | Transcript>[] = [
  {
    name: "200 KB string + 8-char append (`text += piece`)",
    initial: () => doc(makeText(200 * 1024, 2)),
    mutate: (d, k) => {
      (d as Doc).content[0]!.text += pieces8[k % 512];
    },
    iterations: 100,
  },
  {
    // The producer reads the text before the flush (counts its lines, say), which
    // flattens the concatenation itself (not timed): the flush is left the comparison.
    name: "200 KB string + 8-char append, flattened by a read of the producer first",
    initial: () => doc(makeText(200 * 1024, 2)),
    mutate: (d, k) => {
      (d as Doc).content[0]!.text += pieces8[k % 512];
    },
    untimed: (d) => {
      if ((d as Doc).content[0]!.text.charCodeAt(0) === 0) throw new Error("unreachable");
    },
    iterations: 100,
  },
  {
    // Ours told the change (`editText`, the path the sink uses); the reference compares.
    name: "200 KB string + 8-char append, ours by `editText(path, 0, piece)`",
    initial: () => doc(makeText(200 * 1024, 2)),
    mutate: (d, k) => {
      (d as Doc).content[0]!.text += pieces8[k % 512];
    },
    oursMutate: (t, k) => t.editText(["content", 0, "text"], 0, pieces8[k % 512]!),
    iterations: 100,
  },
  {
    name: "50 KB rolling window: slice(32) + 32 new chars",
    initial: () => doc(makeText(50 * 1024, 1)),
    mutate: (d, k) => {
      const block = (d as Doc).content[0]!;
      block.text = block.text.slice(32) + pieces32[k % 512];
    },
    iterations: 300,
  },
  {
    name: "three scalar writes (a step and two totals)",
    initial: () => doc("x"),
    mutate: (d, k) => {
      const details = (d as Doc).details;
      details.step = k;
      details.lines = k * 3;
      details.bytes = k * 41;
    },
    iterations: 2000,
  },
  {
    name: "transcript push onto 200 messages (grows by one per flush)",
    initial: () => ({
      messages: Array.from({ length: 200 }, (_, i) => ({
        role: i % 2 === 0 ? "user" : "assistant",
        content: makeText(400, 3 + i),
      })),
    }),
    mutate: (d, k) => {
      (d as Transcript).messages.push({ role: "assistant", content: replies[k % 256]! });
    },
    iterations: 100,
  },
  {
    name: "rolling transcript: push one message, shift the oldest",
    initial: () => ({
      messages: Array.from({ length: 200 }, (_, i) => ({
        role: i % 2 === 0 ? "user" : "assistant",
        content: makeText(400, 3 + i),
      })),
    }),
    mutate: (d, k) => {
      const messages = (d as Transcript).messages;
      messages.push({ role: "assistant", content: replies[k % 256]! });
      messages.shift();
    },
    iterations: 300,
  },
];

/**
 * What the engine does for any tracker that is not told the edit: `text += piece` makes a
 * concatenation, and the first read of its characters (a slice, `===` against a slice,
 * `startsWith`, `indexOf`, `charCodeAt`) copies it into one flat string. No tracker
 * involved: µs per `s += piece` plus one `charCodeAt`, and per comparison of the flat
 * result with its previous value's prefix.
 */
function floor(kb: number): { flatten: number; compare: number } {
  let s = makeText(kb * 1024, 2);
  s.charCodeAt(0);
  let flatten = 0;
  let compare = 0;
  let sinkHole = 0;
  for (let k = 0; k < 600; k++) {
    const prev = s;
    const t0 = performance.now();
    s += pieces8[k % 512];
    sinkHole += s.charCodeAt(0);
    const t1 = performance.now();
    if (s.slice(0, prev.length) === prev) sinkHole++;
    const t2 = performance.now();
    if (k >= 100) {
      flatten += t1 - t0;
      compare += t2 - t1;
    }
  }
  if (sinkHole < 0) console.log(sinkHole);
  return { flatten: (flatten * 1000) / 500, compare: (compare * 1000) / 500 };
}

function fmt(n: number, digits = 1): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(digits);
}

export default async function trackerBench(): Promise<void> {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} (timings scale with it; the ratio is taken round by round)\n`,
  );
  console.log(
    "| case | ours µs / flush | reference µs / flush | reference ÷ ours |\n| --- | ---: | ---: | ---: |",
  );
  for (const c of cases) {
    const r = measure(c);
    console.log(`| ${r.name} | ${fmt(r.ours, 2)} | ${fmt(r.theirs, 2)} | ${fmt(r.ratio, 2)} |`);
  }
  console.log(
    "\nThe engine's share of a `+=` flush (no tracker): µs to flatten the concatenation, and to compare the flat result with the old value\n",
  );
  console.log("| string | flatten µs | compare µs |\n| --- | ---: | ---: |");
  for (const kb of [50, 100, 200]) {
    const f = floor(kb);
    console.log(`| ${kb} KB + 8 | ${fmt(f.flatten, 2)} | ${fmt(f.compare, 2)} |`);
  }
  console.log("");
}
