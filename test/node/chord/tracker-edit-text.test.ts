import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  decoder,
  encoder,
  type JsonValue,
  type Op,
  type Path,
  track,
} from "../../../src/core/chord/index.ts";

const plain = (v: unknown): JsonValue => JSON.parse(JSON.stringify(v));

interface Doc {
  content: { type: string; text: string }[];
  list: string[];
  meta: { n: number; note: string };
}

const TEXT: Path = ["content", 0, "text"];
const LISTED: Path = ["list", 1];

function doc(text: string): Doc {
  return { content: [{ type: "text", text }], list: ["x", "yz", "w"], meta: { n: 0, note: "" } };
}

describe("Tracker.editText", () => {
  it("sends a known slide of a 50 KB periodic text as exactly t + a", () => {
    const dots = ".".repeat(51_200);
    const fresh = "0123456789abcdefghijklmnopqrstuv";
    const t = track(doc(dots));
    t.flush();
    t.editText(TEXT, 32, fresh);
    expect(t.flush()).toEqual([
      ["t", TEXT, 32],
      ["a", TEXT, fresh],
    ]);
    expect(t.state.content[0]?.text).toBe(dots.slice(32) + fresh);
  });

  it("folds several edits before a flush into one t and one a", () => {
    const t = track(doc("abcdef"));
    t.flush();
    t.editText(TEXT, 2, "gh");
    t.editText(TEXT, 1, "i");
    expect(t.state.content[0]?.text).toBe("defghi");
    expect(t.flush()).toEqual([
      ["t", TEXT, 3],
      ["a", TEXT, "ghi"],
    ]);
    // A drop that reaches into what was appended since the flush.
    t.editText(TEXT, 1, "jk");
    t.editText(TEXT, 6, "l");
    expect(t.state.content[0]?.text).toBe("kl");
    expect(t.flush()).toEqual([
      ["t", TEXT, 6],
      ["a", TEXT, "kl"],
    ]);
  });

  it("is compared as usual when the string was also assigned since the flush", () => {
    const t = track(doc("hello world"));
    t.flush();
    t.editText(TEXT, 0, "!");
    (t.state.content[0] as { text: string }).text = "hello world!?";
    t.editText(TEXT, 6, "");
    expect(t.state.content[0]?.text).toBe("world!?");
    expect(t.flush()).toEqual([
      ["t", TEXT, 6],
      ["a", TEXT, "!?"],
    ]);
  });

  it("is undone by discard and superseded by rebase", () => {
    const t = track(doc("abc"));
    t.flush();
    t.editText(TEXT, 1, "d");
    t.discard();
    expect(plain(t.state)).toEqual(doc("abc"));
    expect(t.dirty).toBe(false);
    expect(t.flush()).toEqual([]);
    t.editText(TEXT, 1, "e");
    t.rebase();
    expect(t.flush()).toEqual([["r", plain(doc("bce"))]]);
    t.editText(TEXT, 0, "f");
    expect(t.flush()).toEqual([["a", TEXT, "f"]]);
  });

  it("refuses a path that holds no string, and a bad drop, changing nothing", () => {
    const t = track(doc("abc"));
    t.flush();
    expect(() => t.editText(["meta", "n"], 0, "x")).toThrow(/is not a string in the state/);
    expect(() => t.editText(["nope"], 0, "x")).toThrow(/is not a string in the state/);
    expect(() => t.editText(["content", 5, "text"], 0, "x")).toThrow(/not a string/);
    expect(() => t.editText([], 0, "x")).toThrow(/must name a string/);
    expect(() => t.editText(["__proto__", "x"], 0, "x")).toThrow(/not a string|unsafe/i);
    expect(() => t.editText(TEXT, 4, "x")).toThrow(/drop must be an integer from 0 to 3/);
    expect(() => t.editText(TEXT, -1, "x")).toThrow(RangeError);
    expect(() => t.editText(TEXT, 1.5, "x")).toThrow(RangeError);
    expect(() => t.editText(TEXT, 0, 7 as unknown as string)).toThrow(/append must be a string/);
    expect(t.dirty).toBe(false);
    expect(plain(t.state)).toEqual(doc("abc"));
  });

  it("edits a string inside an array, and falls back to comparing after the array moved", () => {
    const t = track(doc(""));
    t.flush();
    t.editText(LISTED, 1, "q");
    expect(t.flush()).toEqual([
      ["t", LISTED, 1],
      ["a", LISTED, "q"],
    ]);
    t.state.list.unshift("new");
    t.editText(["list", 2], 0, "r");
    expect(t.state.list).toEqual(["new", "x", "zqr", "w"]);
    const ops = t.flush();
    expect(apply(plain(doc("")) as JsonValue, [["s", ["list"], ["x", "zq", "w"]], ...ops])).toEqual(
      plain(t.state),
    );
  });
});

type Step =
  | { kind: "edit"; at: "text" | "listed" | "note"; drop: number; append: string }
  | { kind: "assign"; text: string }
  | { kind: "other"; n: number }
  | { kind: "push"; text: string }
  | { kind: "shift" }
  | { kind: "flush" }
  | { kind: "discard" }
  | { kind: "rebase" };

const piece = fc.string({ unit: fc.constantFrom("a", "b", ".", "\n", "é", "😀"), maxLength: 8 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("edit" as const),
      at: fc.constantFrom("text" as const, "listed" as const, "note" as const),
      drop: fc.nat(40),
      append: piece,
    }),
  },
  { weight: 1, arbitrary: piece.map((text) => ({ kind: "assign" as const, text })) },
  { weight: 2, arbitrary: fc.nat(9).map((n) => ({ kind: "other" as const, n })) },
  { weight: 1, arbitrary: piece.map((text) => ({ kind: "push" as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: "shift" as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: "flush" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "discard" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "rebase" as const }) },
);

describe("Tracker.editText property", () => {
  it("replica equals producer at every flush, and discard returns to the last flushed state", () => {
    fc.assert(
      fc.property(piece, fc.array(step, { minLength: 1, maxLength: 80 }), (start, steps) => {
        const t = track(doc(start));
        const enc = encoder();
        const dec = decoder();
        let replica: JsonValue = null;
        let flushed: JsonValue = null;
        const deliver = (ops: Op[]) => {
          replica = apply(replica, dec.decode(JSON.parse(JSON.stringify(enc.encode(ops)))));
          flushed = plain(t.state);
          expect(replica).toEqual(flushed);
        };
        deliver(t.flush());
        for (const s of steps) {
          const state = t.state as Doc;
          if (s.kind === "edit") {
            const path: Path =
              s.at === "text" ? TEXT : s.at === "note" ? ["meta", "note"] : ["list", 1];
            if (s.at === "listed" && state.list.length < 2) continue;
            const current =
              s.at === "text"
                ? (state.content[0]?.text ?? "")
                : s.at === "note"
                  ? state.meta.note
                  : (state.list[1] as string);
            const drop = s.drop % (current.length + 1);
            const expected = current.slice(drop) + s.append;
            t.editText(path, drop, s.append);
            const after =
              s.at === "text"
                ? state.content[0]?.text
                : s.at === "note"
                  ? state.meta.note
                  : state.list[1];
            expect(after).toBe(expected);
          } else if (s.kind === "assign") {
            (state.content[0] as { text: string }).text += s.text;
          } else if (s.kind === "other") state.meta.n = s.n;
          else if (s.kind === "push") state.list.push(s.text);
          else if (s.kind === "shift") state.list.shift();
          else if (s.kind === "discard") {
            t.discard();
            expect(plain(t.state)).toEqual(flushed);
          } else if (s.kind === "rebase") t.rebase();
          else {
            const ops = t.flush();
            // Known edits alone never fall back to a whole-string set.
            deliver(ops);
          }
        }
        deliver(t.flush());
      }),
      { seed: 8080, numRuns: 2000 },
    );
  });

  it("a stream of edits alone is only t and a ops, and costs no comparison of the strings", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(60), piece, fc.boolean()), { minLength: 1, maxLength: 60 }),
        (edits) => {
          const t = track(doc("start of a text"));
          const enc = encoder();
          const dec = decoder();
          let replica = apply(null, dec.decode(enc.encode(t.flush())));
          for (const [drop, append, flush] of edits) {
            const text = (t.state as Doc).content[0]?.text ?? "";
            t.editText(TEXT, drop % (text.length + 1), append);
            if (!flush) continue;
            const ops = t.flush();
            for (const op of ops) expect(["t", "a"]).toContain(op[0]);
            expect(ops.length).toBeLessThanOrEqual(2);
            replica = apply(replica, dec.decode(enc.encode(ops)));
            expect(replica).toEqual(plain(t.state));
          }
        },
      ),
      { seed: 9090, numRuns: 1000 },
    );
  });
});
