/**
 * Chord against named alternatives, same process, same inputs (issue 2, "Benchmarks"):
 *  1. a 50 KB rolling window (slice(32) + 32 new chars, then flush);
 *  2. a 200 KB string plus an 8-char append, and one transcript push;
 *  3. wire bytes for 500 flushes of that window.
 * Time is the best-round µs of mutation + producing the delta, with and without serialising
 * it as JSON (a delta is only useful once it can be sent or stored); bytes are the UTF-8
 * size of that JSON.
 */

import { loadavg } from "node:os";
import fastJsonPatch from "fast-json-patch";
import { enablePatches, produceWithPatches } from "immer";
import { create } from "mutative";
import { encoder, type JsonValue, track } from "../src/core/chord/index.ts";
import { makeText } from "./log-text.ts";

enablePatches();

const utf8 = new TextEncoder();
const bytesOf = (v: unknown): number => utf8.encode(JSON.stringify(v)).length;

interface Doc {
  content: { type: "text"; text: string }[];
  details: { step: number };
  terminate: boolean;
}
interface Transcript {
  messages: { role: string; content: string }[];
}

type Contender<S> = {
  name: string;
  /** Returns a function that applies one mutation and returns the delta it produced. */
  make: (initial: S) => (mutate: (draft: S) => void) => unknown;
  /** The delta is already the JSON text (snapshots). */
  isJson?: boolean;
};

function contenders<S extends object>(): Contender<S>[] {
  return [
    {
      name: "Chord",
      make: (initial) => {
        const t = track(structuredClone(initial) as JsonValue);
        t.flush();
        return (mutate) => {
          mutate(t.state as S);
          return t.flush();
        };
      },
    },
    {
      name: "Immer produceWithPatches",
      make: (initial) => {
        let state = structuredClone(initial);
        return (mutate) => {
          const [next, patches] = produceWithPatches(state, (d) => {
            mutate(d as S);
          });
          state = next as S;
          return patches;
        };
      },
    },
    {
      name: "Mutative patches",
      make: (initial) => {
        let state = structuredClone(initial);
        return (mutate) => {
          const [next, patches] = create(
            state,
            (d) => {
              mutate(d as S);
            },
            { enablePatches: true },
          );
          state = next as S;
          return patches;
        };
      },
    },
    {
      name: "JSON snapshot",
      isJson: true,
      make: (initial) => {
        const state = structuredClone(initial);
        return (mutate) => {
          mutate(state);
          return JSON.stringify(state);
        };
      },
    },
  ];
}

interface Row {
  name: string;
  /** Mutation + delta + JSON.stringify of the delta. */
  us: number;
  /** Mutation + delta only. */
  usProduce: number;
  bytes: number;
}

/**
 * µs per call: the best of `rounds` rounds of `iterations` calls, after a warm-up. The
 * best round is the least disturbed by other processes on a shared machine.
 */
function timeRuns<S extends object>(
  contender: Contender<S>,
  initial: S,
  steps: ((draft: S) => void)[],
  iterations: number,
  rounds: number,
  serialise: boolean,
): { us: number; bytes: number } {
  const run = contender.make(initial);
  const stringify = serialise && !contender.isJson;
  let i = 0;
  for (let w = 0; w < Math.min(200, iterations); w++) {
    run(steps[i++ % steps.length] as (d: S) => void);
  }
  const perRound: number[] = [];
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    const deltas: unknown[] = new Array(iterations);
    const start = performance.now();
    for (let k = 0; k < iterations; k++) {
      const delta = run(steps[i++ % steps.length] as (d: S) => void);
      deltas[k] = stringify ? JSON.stringify(delta) : delta;
    }
    perRound.push(((performance.now() - start) * 1000) / iterations);
    for (const d of deltas)
      bytes += utf8.encode(typeof d === "string" ? d : JSON.stringify(d)).length;
  }
  perRound.sort((a, b) => a - b);
  return {
    us: perRound[Math.floor(perRound.length / 2)] as number,
    bytes: bytes / (rounds * iterations),
  };
}

function measure<S extends object>(
  initial: S,
  steps: ((draft: S) => void)[],
  iterations: number,
  rounds = 7,
): Row[] {
  return contenders<S>().map((c) => {
    const full = timeRuns(c, initial, steps, iterations, rounds, true);
    const produce = timeRuns(c, initial, steps, iterations, rounds, false);
    return { name: c.name, us: full.us, usProduce: produce.us, bytes: full.bytes };
  });
}

function fmt(n: number, digits = 1): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(digits);
}

function table(title: string, rows: Row[]): void {
  const chord = rows[0] as Row;
  console.log(`### ${title}\n`);
  console.log(
    "| approach | µs / flush (incl. JSON) | × Chord | µs (delta only) | × Chord | bytes / flush | × Chord |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${fmt(r.us, 2)} | ${fmt(r.us / chord.us)} | ${fmt(r.usProduce, 2)} | ${fmt(r.usProduce / chord.usProduce)} | ${fmt(r.bytes, 0)} | ${fmt(r.bytes / chord.bytes)} |`,
    );
  }
  console.log("");
}

function doc(text: string): Doc {
  return { content: [{ type: "text", text }], details: { step: 0 }, terminate: false };
}

/** Precomputed chunks so text generation is not timed. */
function chunks(count: number, size: number): string[] {
  return Array.from({ length: count }, (_, i) => makeText(size, 1000 + i));
}

function rollingWindow(): void {
  const window = makeText(50 * 1024, 1);
  const pieces = chunks(512, 32);
  const steps = pieces.map((piece) => (d: Doc) => {
    const block = d.content[0] as { text: string };
    block.text = block.text.slice(32) + piece;
  });
  table(
    "1. 50 KB rolling window: slice(32) + 32 new chars, then flush",
    measure(doc(window), steps, 1000),
  );
}

function bigAppend(): void {
  const text = makeText(200 * 1024, 2);
  const pieces = chunks(512, 8);
  const steps = pieces.map((piece) => (d: Doc) => {
    const block = d.content[0] as { text: string };
    block.text += piece;
  });
  // The text grows by 8 chars per call; it stays ~200 KB over the run.
  table("2a. 200 KB string + 8-char append, then flush", measure(doc(text), steps, 200));
}

function transcriptPush(): void {
  const messages = Array.from({ length: 200 }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: makeText(400, 3 + i),
  }));
  const replies = chunks(256, 400);
  const push = replies.map((content) => (d: Transcript) => {
    d.messages.push({ role: "assistant", content });
  });
  table(
    "2b. transcript push: one message object onto a transcript of 200 messages (~90 KB; it grows by one per flush), then flush",
    measure({ messages }, push, 100),
  );
  const rolling = replies.map((content) => (d: Transcript) => {
    d.messages.push({ role: "assistant", content });
    d.messages.shift();
  });
  table(
    "2c. rolling transcript: push one message and shift the oldest (stays 200 messages), then flush",
    measure({ messages }, rolling, 300),
  );
}

function wireBytes(): void {
  const window = makeText(50 * 1024, 1);
  const pieces = chunks(500, 32);
  const t = track(doc(window) as unknown as JsonValue);
  const enc = encoder();
  enc.encode(t.flush());
  let encoded = 0;
  let inline = 0;
  let rfc6902 = 0;
  let snapshots = 0;
  let prev = doc(window);
  for (const piece of pieces) {
    const state = t.state as unknown as Doc;
    const block = state.content[0] as { text: string };
    block.text = block.text.slice(32) + piece;
    const ops = t.flush();
    encoded += bytesOf(enc.encode(ops));
    inline += bytesOf(ops);
    const next = JSON.parse(JSON.stringify(state)) as Doc;
    rfc6902 += bytesOf(fastJsonPatch.compare(prev, next));
    snapshots += bytesOf(next);
    prev = next;
  }
  const rows = [
    { name: "Chord encoded (WireOp[])", bytes: encoded },
    { name: "Chord inline Op[] JSON", bytes: inline },
    { name: "RFC 6902 (fast-json-patch compare)", bytes: rfc6902 },
    { name: "whole JSON snapshots", bytes: snapshots },
  ];
  console.log("### 3. Wire bytes for 500 flushes of the 50 KB window (after the first base)\n");
  console.log("| format | total bytes | bytes / flush | × Chord encoded |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.bytes.toLocaleString("en-US")} | ${fmt(r.bytes / 500)} | ${fmt(r.bytes / encoded, 2)} |`,
    );
  }
  console.log(
    `\nEncoded wire is ${((1 - encoded / inline) * 100).toFixed(1)}% smaller than inline ops.\n`,
  );
}

export default async function chordBench(): Promise<void> {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} (timings scale with it)\n`,
  );
  rollingWindow();
  bigAppend();
  transcriptPush();
  wireBytes();
}
