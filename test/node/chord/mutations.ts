import fc from "fast-check";
import type { JsonObject, JsonValue } from "../../../src/core/chord/index.ts";

/**
 * Random JSON values and random mutation steps, shared by the property tests that
 * drive a tracker (ours or the reference Chord's) the way a program would.
 */

/** Small keys (no unsafe ones), a small alphabet so strings overlap often. */
export const key = fc.constantFrom("a", "b", "c", "d", "0", "x y", "é");
export const text = fc.string({
  unit: fc.constantFrom("a", "b", "c", "\n", "é", "😀"),
  maxLength: 24,
});
export const { json } = fc.letrec<{ json: JsonValue }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -5, max: 5 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    text,
    fc.array(tie("json"), { maxLength: 4 }),
    fc.dictionary(key, tie("json"), { maxKeys: 4 }),
  ),
}));
export const container = fc.oneof(
  fc.array(json, { maxLength: 5 }),
  fc.dictionary(key, json, { maxKeys: 5 }),
);

export const plain = (v: unknown): JsonValue => JSON.parse(JSON.stringify(v));
export const isObject = (v: unknown): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** One random step, applied to the tracked draft and to a plain model alike. */
export type Step = {
  kind: number;
  pick: number;
  n: number;
  m: number;
  value: JsonValue;
  items: JsonValue[];
  str: string;
  key: string;
  flush: boolean;
};

export const step: fc.Arbitrary<Step> = fc.record({
  kind: fc.nat(99),
  pick: fc.nat(),
  n: fc.integer({ min: -3, max: 8 }),
  m: fc.nat(6),
  value: json,
  items: fc.array(json, { maxLength: 3 }),
  str: text,
  key,
  flush: fc.nat(3).map((n) => n === 0),
});

/** Every container in `root`, as paths. */
export function containers(
  root: JsonValue,
  path: (string | number)[] = [],
  out: (string | number)[][] = [],
) {
  if (typeof root !== "object" || root === null) return out;
  out.push(path);
  if (Array.isArray(root))
    for (let i = 0; i < root.length; i++) containers(root[i] as JsonValue, [...path, i], out);
  else for (const k of Object.keys(root)) containers(root[k] as JsonValue, [...path, k], out);
  return out;
}

export function at(root: JsonValue, path: (string | number)[]): JsonValue {
  let cur = root;
  for (const seg of path) cur = (cur as Record<string | number, JsonValue>)[seg] as JsonValue;
  return cur;
}

/** Applies `s` to one container (a draft or a model); both see the same step. */
export function mutate(target: JsonValue, s: Step, isModel: boolean): void {
  if (Array.isArray(target)) {
    const len = target.length;
    const i = len === 0 ? 0 : Math.abs(s.n) % (len + 1);
    const sub = s.kind % 14;
    const strings = target.map((v, j) => [v, j] as const).filter(([v]) => typeof v === "string");
    if (sub === 0) target.push(...structuredClone(s.items));
    else if (sub === 1) target.unshift(...structuredClone(s.items));
    else if (sub === 2) target.splice(s.n, s.m, ...structuredClone(s.items));
    else if (sub === 3) target.pop();
    else if (sub === 4) target.shift();
    else if (sub === 5 && s.m % 2 === 0) target.sort();
    else if (sub === 5) target.sort(byJsonDescending);
    else if (sub === 6) target.reverse();
    else if (sub === 7 && isModel)
      while (target.length !== s.m) target.length < s.m ? target.push(null) : target.pop();
    else if (sub === 7) target.length = s.m;
    else if (sub === 8) target[i] = structuredClone(s.value);
    else if (sub === 9) target.fill(structuredClone(s.value), s.n, s.n + s.m);
    else if (sub === 10) target.copyWithin(s.n, s.m);
    else if (strings.length > 0) {
      const [v, j] = strings[s.pick % strings.length] as readonly [string, number];
      target[j] = editText(v, s);
    } else target.push(s.str);
    return;
  }
  const obj = target as JsonObject;
  const sub = s.kind % 6;
  const strings = Object.keys(obj)
    .filter((k) => typeof obj[k] === "string")
    .sort();
  if (sub === 0) obj[s.key] = structuredClone(s.value);
  else if (sub === 1) delete obj[s.key];
  else if (sub === 2) (obj as Record<string, JsonValue | undefined>)[s.key] = undefined;
  else if (strings.length > 0) {
    const k = strings[s.pick % strings.length] as string;
    obj[k] = editText(obj[k] as string, s);
  } else obj[s.key] = s.str;
}

function editText(v: string, s: Step): string {
  switch (s.m % 4) {
    case 0:
      return v + s.str;
    case 1:
      return v.slice(Math.abs(s.n)) + s.str;
    case 2:
      return v.slice(Math.abs(s.n));
    default:
      return s.str;
  }
}

/** A comparator over JSON values (tracked proxies serialise like the plain values). */
function byJsonDescending(a: unknown, b: unknown): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? 1 : x > y ? -1 : 0;
}
