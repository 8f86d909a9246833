/**
 * Wire bytes of `sort()` and `reverse()` on a tracked array (docs/decisions/009): what
 * the tracker sends, and the reorder `["m", path, permutation]` alone. Run it on the
 * tracker before reorders (commit 36cb721) for the splice form. Each batch is encoded
 * as the second batch of a stream (the path written out once before) and measured as
 * UTF-8 JSON. Bytes only: no timings here.
 */

import { encoder, type JsonValue, type Op, track } from "../src/core/chord/index.ts";

const utf8 = new TextEncoder();
const bytesOf = (v: unknown): number => utf8.encode(JSON.stringify(v)).length;

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

type Kind = "digits" | "ids" | "words" | "objects";

function element(kind: Kind, i: number, next: () => number): JsonValue {
  switch (kind) {
    case "digits":
      return Math.floor(next() * 10);
    case "ids":
      return Math.floor(next() * 1_000_000);
    case "words":
      return Math.floor(next() * 2 ** 40)
        .toString(36)
        .padStart(8, "a");
    case "objects":
      return { id: i, name: `item ${Math.floor(next() * 1000)}`, done: next() < 0.5 };
  }
}

type Change = "sort" | "reverse" | "sort, one out of place";

function arrayOf(kind: Kind, n: number, change: Change): JsonValue[] {
  const next = random(n * 31 + kind.length);
  const arr = Array.from({ length: n }, (_, i) => element(kind, i, next));
  if (change === "sort, one out of place") {
    arr.sort(compare);
    // The last element moves to the front: the array is sorted but for one.
    if (n > 1) arr.unshift(arr.pop() as JsonValue);
  }
  return arr;
}

/** Numbers as numbers, words as text, objects by name. */
function compare(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const x = typeof a === "string" ? a : (a as { name: string }).name;
  const y = typeof b === "string" ? b : (b as { name: string }).name;
  return x < y ? -1 : x > y ? 1 : 0;
}

function mutate(items: JsonValue[], change: Change): void {
  if (change === "reverse") items.reverse();
  else items.sort(compare);
}

/** The permutation taking `before` to `after` (`after[i] = before[order[i]]`), by value. */
function permutation(before: JsonValue[], after: JsonValue[]): number[] {
  const at = new Map<string, number[]>();
  before.forEach((v, i) => {
    const key = JSON.stringify(v);
    const list = at.get(key);
    if (list) list.push(i);
    else at.set(key, [i]);
  });
  return after.map((v) => (at.get(JSON.stringify(v)) as number[]).shift() as number);
}

/** Bytes of `ops` encoded as the second batch of a stream that wrote the path once. */
function encodedBytes(ops: Op[], initial: JsonValue): number {
  const enc = encoder();
  enc.encode([["r", initial]]);
  enc.encode([["s", ["items", 0], null]]);
  return bytesOf(enc.encode(ops));
}

interface Row {
  reorder: number;
  tracker: number;
  verbs: string;
}

function measure(kind: Kind, n: number, change: Change): Row {
  const initial = { items: arrayOf(kind, n, change) };
  const before = structuredClone(initial.items);
  const after = structuredClone(before);
  mutate(after, change);
  const t = track<{ items: JsonValue[] }>(structuredClone(initial));
  t.flush();
  mutate(t.state.items, change);
  const ops = t.flush();
  return {
    reorder: encodedBytes([["m", ["items"], permutation(before, after)]], initial),
    tracker: encodedBytes(ops, initial),
    verbs: ops.map((op) => op[0]).join("+") || "(none)",
  };
}

export default async function run(): Promise<void> {
  console.log("| elements | n | change | m alone B | tracker sends | B |");
  console.log("| --- | ---: | --- | ---: | --- | ---: |");
  for (const kind of ["digits", "ids", "words", "objects"] as Kind[]) {
    for (const n of [2, 5, 10, 100, 1000, 10000]) {
      for (const change of ["sort", "reverse", "sort, one out of place"] as Change[]) {
        const r = measure(kind, n, change);
        console.log(`| ${kind} | ${n} | ${change} | ${r.reorder} | ${r.verbs} | ${r.tracker} |`);
      }
    }
  }
}
