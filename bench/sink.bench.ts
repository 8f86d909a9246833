/**
 * The sink's flush for a bash-shaped slide (issue 8, item 4): a 50 KB tail window whose
 * source drops 32 characters and appends 32 (one sandbox `slide` update with its totals),
 * then one flush. Against Immer and Mutative making the same change to the same
 * `ToolOutputState` (text slid, totals moved) and producing their patches, in the same
 * run. Time is the median of 31 rounds of 500 flushes (after 5,000 warm-up flushes per
 * contender; rounds interleaved across contenders), with and without `JSON.stringify` of
 * the delta; "× sink" is the median over rounds of the ratio to the sink's round next to
 * it, which load drifting during the run moves least. Bytes are the UTF-8 size of the
 * delta's JSON.
 */

import { loadavg } from "node:os";
import { enablePatches, produceWithPatches } from "immer";
import { create } from "mutative";
import { ToolOutputSink } from "../src/core/output/index.ts";
import type { ToolOutputState, Truncation } from "../src/core/output/types.ts";
import { makeText } from "./log-text.ts";

enablePatches();

const utf8 = new TextEncoder();
const WINDOW = 50 * 1024;
const SLIDE = 32;

/** The totals a sandbox reports after `k` slides (what `capture` receives). */
function metaAfter(k: number): Truncation {
  return {
    truncated: true,
    truncatedBy: "bytes",
    totalLines: 1250 + k,
    totalBytes: WINDOW + k * SLIDE,
    outputLines: 1250,
    outputBytes: WINDOW,
    maxLines: 2000,
    maxBytes: 51_200,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    spillPath: ".toolwire/spill/bench.log",
  };
}

function initialState(text: string): ToolOutputState {
  return {
    content: [{ type: "text", text }],
    details: {},
    terminate: false,
    truncation: metaAfter(0),
  };
}

/** Applies slide `k` (drop 32, append `piece`) and returns the delta it produced. */
type Step = (k: number, piece: string) => unknown;

interface Contender {
  name: string;
  make(window: string): Step;
}

const contenders: Contender[] = [
  {
    name: "Toolwire sink (slide + capture + flush)",
    make(window) {
      // bash's policy (the sandbox's window plus room for the footer), scaled to the window.
      const sink = new ToolOutputSink({
        policy: { retain: "tail", maxBytes: window.length + 2048, maxLines: 100_000 },
      });
      sink.capture(metaAfter(0));
      sink.replace(window);
      sink.flush();
      return (k, piece) => {
        sink.slide(SLIDE, piece);
        sink.capture(metaAfter(k));
        return sink.flush();
      };
    },
  },
  {
    name: "Immer produceWithPatches",
    make(window) {
      let state = initialState(window);
      return (k, piece) => {
        const [next, patches] = produceWithPatches(state, (d) => {
          const block = d.content[0] as { text: string };
          block.text = block.text.slice(SLIDE) + piece;
          Object.assign(d.truncation, metaAfter(k));
        });
        state = next;
        return patches;
      };
    },
  },
  {
    name: "Mutative patches",
    make(window) {
      let state = initialState(window);
      return (k, piece) => {
        const [next, patches] = create(
          state,
          (d) => {
            const block = d.content[0] as { text: string };
            block.text = block.text.slice(SLIDE) + piece;
            Object.assign(d.truncation, metaAfter(k));
          },
          { enablePatches: true },
        );
        state = next;
        return patches;
      };
    },
  },
];

interface Row {
  name: string;
  usProduce: number;
  us: number;
  /** Median over rounds of (this contender's round / the sink's round), delta only and with JSON. */
  ratioProduce: number;
  ratio: number;
  bytes: number;
}

const ITERATIONS = 500;
const ROUNDS = 31;
/** Steps before timing: enough for every contender's hot path to be optimised. */
const WARM_UP = 5000;
/** Flushes whose JSON is measured for bytes / flush (after timing). */
const BYTE_SAMPLES = 500;

/** One contender instance being timed: with or without serialising its deltas. */
interface Runner {
  row: number;
  serialise: boolean;
  step: Step;
  k: number;
  perRound: number[];
  bytes: number;
}

/**
 * Median µs per step over `ROUNDS` rounds. Rounds are interleaved across contenders so
 * that machine load drifting during the run affects all of them alike.
 */
function timeAll(pieces: string[]): Row[] {
  const window = makeText(WINDOW, 1);
  const runners: Runner[] = [];
  contenders.forEach((c, row) => {
    for (const serialise of [false, true]) {
      runners.push({ row, serialise, step: c.make(window), k: 0, perRound: [], bytes: 0 });
    }
  });
  const next = (r: Runner): unknown => {
    r.k++;
    return r.step(r.k, pieces[r.k % pieces.length] as string);
  };
  for (const r of runners) for (let w = 0; w < WARM_UP; w++) next(r);
  // Deltas are not kept while timing: 2,000 retained 50 KB patches would make the
  // collector's work land in whichever contender runs next. Bytes are measured apart.
  let sinkHole: unknown = null;
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of runners) {
      const start = performance.now();
      for (let i = 0; i < ITERATIONS; i++) {
        const delta = next(r);
        sinkHole = r.serialise ? JSON.stringify(delta) : delta;
      }
      r.perRound.push(((performance.now() - start) * 1000) / ITERATIONS);
    }
  }
  for (const r of runners) {
    for (let i = 0; i < BYTE_SAMPLES; i++) r.bytes += utf8.encode(JSON.stringify(next(r))).length;
  }
  if (sinkHole === undefined) console.log("");
  const median = (xs: number[]): number =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const runner = (row: number, serialise: boolean): Runner =>
    runners.find((r) => r.row === row && r.serialise === serialise) as Runner;
  const ratios = (row: number, serialise: boolean): number =>
    median(runner(row, serialise).perRound.map((us, i) => us / runner(0, serialise).perRound[i]!));
  return contenders.map((c, row) => {
    const produce = runner(row, false);
    const full = runner(row, true);
    return {
      name: c.name,
      usProduce: median(produce.perRound),
      us: median(full.perRound),
      ratioProduce: ratios(row, false),
      ratio: ratios(row, true),
      bytes: full.bytes / BYTE_SAMPLES,
    };
  });
}

function fmt(n: number, digits = 1): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(digits);
}

/** The sink alone at several window sizes: producing the delta should not grow with them. */
function scaling(pieces: string[]): void {
  console.log("### The sink alone: µs per slide + capture + flush by window size\n");
  console.log("| window | µs (delta only) |");
  console.log("| ---: | ---: |");
  const sink = contenders[0] as Contender;
  for (const size of [5 * 1024, 50 * 1024, 500 * 1024]) {
    const step = sink.make(makeText(size, 2));
    let k = 0;
    for (let w = 0; w < WARM_UP; w++, k++) step(k + 1, pieces[k % pieces.length] as string);
    const perRound: number[] = [];
    let hole: unknown = null;
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      for (let i = 0; i < ITERATIONS; i++, k++)
        hole = step(k + 1, pieces[k % pieces.length] as string);
      perRound.push(((performance.now() - start) * 1000) / ITERATIONS);
    }
    if (hole === undefined) console.log("");
    perRound.sort((a, b) => a - b);
    console.log(
      `| ${fmt(size / 1024, 0)} KB | ${fmt(perRound[Math.floor(ROUNDS / 2)] as number, 2)} |`,
    );
  }
  console.log("");
}

export default async function sinkBench(): Promise<void> {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} (timings scale with it)\n`,
  );
  // Newline-free pieces, as a long line's slide would be, so every contender keeps 50 KB.
  const pieces = Array.from({ length: 512 }, (_, i) =>
    makeText(SLIDE * 2, 1000 + i)
      .replaceAll("\n", " ")
      .slice(0, SLIDE),
  );
  const rows = timeAll(pieces);
  console.log(`### 50 KB tail window, slide ${SLIDE} characters + new totals, then flush\n`);
  console.log(
    "| approach | µs (delta only) | × sink | µs / flush (incl. JSON) | × sink | bytes / flush |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${fmt(r.usProduce, 2)} | ${fmt(r.ratioProduce)} | ${fmt(r.us, 2)} | ${fmt(r.ratio)} | ${fmt(r.bytes, 0)} |`,
    );
  }
  console.log("");
  scaling(pieces);
}
