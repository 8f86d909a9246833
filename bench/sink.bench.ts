/**
 * The sink's flush for a bash-shaped slide (issue 8, item 4): a 50 KB tail window whose
 * source drops 32 characters and appends 32 (one sandbox `slide` update with its totals),
 * then one flush. Against Immer and Mutative making the same change to the same
 * `ToolOutputState` (text slid, totals moved) and producing their patches, in the same
 * run. Time is the median of 9 rounds (µs per flush after a warm-up), with and without
 * `JSON.stringify` of the delta; bytes are the UTF-8 size of that JSON.
 */

import { loadavg } from "node:os";
import { enablePatches, produceWithPatches } from "immer";
import { create } from "mutative";
import { ToolOutputSink } from "../src/output/index.ts";
import type { ToolOutputState, Truncation } from "../src/output/types.ts";

enablePatches();

const utf8 = new TextEncoder();
const WINDOW = 50 * 1024;
const SLIDE = 32;

/** Deterministic log-like text: printable ASCII with a newline about every 41 characters. */
function makeText(length: number, seed: number): string {
  let x = seed >>> 0 || 1;
  let out = "";
  while (out.length < length) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const n = x >>> 0;
    out += n % 41 === 0 ? "\n" : String.fromCharCode(32 + (n % 95));
  }
  return out;
}

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
      const sink = new ToolOutputSink({
        policy: { retain: "tail", maxBytes: 53_248, maxLines: 2008 },
      });
      sink.replace(window);
      sink.capture(metaAfter(0));
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
  bytes: number;
}

function timeRuns(
  contender: Contender,
  pieces: string[],
  serialise: boolean,
): { us: number; bytes: number } {
  const iterations = 2000;
  const rounds = 9;
  const step = contender.make(makeText(WINDOW, 1));
  let k = 0;
  for (let w = 0; w < 500; w++, k++) step(k + 1, pieces[k % pieces.length] as string);
  const perRound: number[] = [];
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    const deltas: unknown[] = new Array(iterations);
    const start = performance.now();
    for (let i = 0; i < iterations; i++, k++) {
      const delta = step(k + 1, pieces[k % pieces.length] as string);
      deltas[i] = serialise ? JSON.stringify(delta) : delta;
    }
    perRound.push(((performance.now() - start) * 1000) / iterations);
    for (const d of deltas) {
      bytes += utf8.encode(typeof d === "string" ? d : JSON.stringify(d)).length;
    }
  }
  perRound.sort((a, b) => a - b);
  return { us: perRound[Math.floor(rounds / 2)] as number, bytes: bytes / (rounds * iterations) };
}

function fmt(n: number, digits = 1): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(digits);
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
  const rows: Row[] = contenders.map((c) => {
    const produce = timeRuns(c, pieces, false);
    const full = timeRuns(c, pieces, true);
    return { name: c.name, usProduce: produce.us, us: full.us, bytes: full.bytes };
  });
  const sink = rows[0] as Row;
  console.log(`### 50 KB tail window, slide ${SLIDE} characters + new totals, then flush\n`);
  console.log(
    "| approach | µs (delta only) | × sink | µs / flush (incl. JSON) | × sink | bytes / flush |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${fmt(r.usProduce, 2)} | ${fmt(r.usProduce / sink.usProduce)} | ${fmt(r.us, 2)} | ${fmt(r.us / sink.us)} | ${fmt(r.bytes, 0)} |`,
    );
  }
  console.log("");
}
