import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_OUTPUT_POLICY, type Truncation } from "../../../src/core/output/types.ts";
import { TextWindow } from "../../../src/core/output/window.ts";
import { utf8ByteLength } from "../../../src/core/retention/utf8.ts";
import {
  headPart,
  headPrefixBytes,
  joinHeadTail,
  type LineRange,
  omittedAfterHead,
  omittedBeforeTail,
  sinkPolicy,
  sourceLimits,
  tailFirstLine,
  type WindowRequest,
  windowFooter,
  windowPlan,
} from "../../../src/execenv/bash-window.ts";
import { MAX_WINDOW_BYTES, MAX_WINDOW_LINES } from "../../../src/protocol/index.ts";

const encoder = new TextEncoder();
const SPILL = ".toolwire/spill/x.log";
/** What bash keeps room for after the output (its BASH_ENDING_ROOM). */
const BASH_ENDING_ROOM = { bytes: 2048, lines: 8 };

/** The lines of `s`, each with its "\n" (the last without one when `s` does not end in one). */
function linesOf(s: string): string[] {
  return s.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * What bash shows for `full` under `req`, as the Worker builds it: the sandbox's live
 * window (a `TextWindow` with the source limits, which the sandbox's `SourceView` equals
 * by its own property test), and for head+tail the head from the spill's first bytes.
 */
function shown(req: WindowRequest, full: string) {
  const plan = windowPlan(req);
  const source = new TextWindow(sourceLimits(plan));
  source.append(full);
  let t: Truncation = source.truncation();
  if (t.truncated) t = { ...t, spillPath: SPILL };
  if (plan.kind !== "headTail" || !t.truncated) {
    const text = source.text;
    const [head, tail] = plan.kind === "head" ? [text, ""] : ["", text];
    return { plan, text, t, middle: null, head, tail };
  }
  const prefix = encoder.encode(full).subarray(0, headPrefixBytes(plan));
  const head = headPart(prefix, plan.head, plan.headBytes, tailFirstLine(t));
  const joined = joinHeadTail(plan, head, source.text, t);
  return {
    plan,
    text: joined.text,
    t: joined.truncation,
    middle: joined.omitted,
    head: head.text,
    tail: source.text,
  };
}

/** The range the footer's read hint names, parsed back from its JSON. */
function hintedRange(footer: string): LineRange | null {
  const m = /read (\{.*?\})(, then|;)/.exec(footer);
  if (!m) return null;
  const call = JSON.parse(m[1]!) as { path: string; offset: number; limit: number };
  expect(call.path).toBe(SPILL);
  const lines = /To see lines? ([\d,]+)(?:–([\d,]+))?: read/.exec(footer)!;
  const from = Number(lines[1]!.replaceAll(",", ""));
  const to = lines[2] ? Number(lines[2].replaceAll(",", "")) : from;
  expect(call.offset).toBe(from);
  expect(call.limit).toBe(Math.min(2000, to - from + 1));
  return { from, to };
}

const line = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("é", "日本", "😀😀", "x".repeat(40)),
);

/** Window sizes at the interesting edges: 1, 2, a few, and the caps ±1 around a total. */
const count = fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constantFrom(1, 2, 3));

describe("windowPlan", () => {
  it("keeps today's default: the last 2,000 lines within 50 KiB", () => {
    expect(windowPlan({})).toEqual({ kind: "tail", lines: 2000, bytes: 51200 });
    expect(sourceLimits(windowPlan({}))).toEqual(DEFAULT_OUTPUT_POLICY);
    expect(sinkPolicy(windowPlan({}), BASH_ENDING_ROOM)).toEqual({
      retain: "tail",
      maxLines: 2008,
      maxBytes: 53248,
    });
  });

  it("splits the byte budget between head and tail by their lines, never past it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_WINDOW_LINES - 1 }),
        fc.integer({ min: 1, max: MAX_WINDOW_LINES - 1 }),
        fc.integer({ min: 1, max: MAX_WINDOW_BYTES }),
        (head, tail, maxBytes) => {
          const plan = windowPlan({ head, tail, maxBytes });
          if (plan.kind !== "headTail") throw new Error("expected head+tail");
          expect(plan.headBytes + plan.tailBytes).toBe(maxBytes);
          expect(plan.headBytes).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});

describe("a windowed result", () => {
  it("shows what was asked within the budget, and its footer names exactly what is not shown", () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            head: fc.option(count, { nil: undefined }),
            tail: fc.option(count, { nil: undefined }),
            maxBytes: fc.option(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constant(4000)), {
              nil: undefined,
            }),
          },
          { requiredKeys: [] },
        ),
        fc.array(line, { maxLength: 16 }),
        fc.boolean(),
        (req, parts, endsWithNewline) => {
          let full = parts.map((p) => `${p}\n`).join("");
          if (!endsWithNewline && parts.length > 0) full = full.slice(0, -1);
          const r = shown(req, full);
          const all = linesOf(full);
          // Bounds: the shown output fits the window and the sink.
          const policy = sinkPolicy(r.plan, BASH_ENDING_ROOM);
          expect(utf8ByteLength(r.head) + utf8ByteLength(r.tail)).toBeLessThanOrEqual(
            req.maxBytes ?? 51200,
          );
          expect(utf8ByteLength(r.text)).toBeLessThanOrEqual(
            policy.maxBytes - BASH_ENDING_ROOM.bytes,
          );
          expect(linesOf(r.text).length).toBeLessThanOrEqual(
            policy.maxLines - BASH_ENDING_ROOM.lines,
          );
          // The parts are the output's own: a prefix and a suffix.
          expect(full.startsWith(r.head)).toBe(true);
          expect(full.endsWith(r.tail)).toBe(true);
          expect(r.t.totalLines).toBe(all.length);
          const footer = windowFooter(r.plan, r.t, r.middle);
          if (!r.t.truncated) {
            expect(footer).toBe("");
            expect(r.text).toBe(full);
            return;
          }
          // What the footer says to read, with what is shown whole, is the whole output.
          const range = hintedRange(footer);
          expect(range).not.toBeNull();
          const { from, to } = range!;
          const before = all.slice(0, from - 1).join("");
          const after = all.slice(to).join("");
          if (r.plan.kind === "headTail") {
            expect(r.head.startsWith(before)).toBe(true);
            expect(r.tail.endsWith(after)).toBe(true);
            expect(r.text).toContain(`omitted (${from.toLocaleString("en-US")}–`);
          } else {
            expect(r.text.startsWith(before)).toBe(true);
            expect(r.text.endsWith(after)).toBe(true);
          }
          expect(before.length + after.length).toBeLessThan(full.length);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("at head + tail lines nothing is omitted; one line more omits exactly that line", () => {
    for (const [head, tail] of [
      [1, 1],
      [3, 2],
      [MAX_WINDOW_LINES / 2, MAX_WINDOW_LINES / 2],
    ] as const) {
      const req = { head, tail, maxBytes: MAX_WINDOW_BYTES };
      for (const n of [head + tail - 1, head + tail, head + tail + 1]) {
        const full = Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");
        const r = shown(req, full);
        const footer = windowFooter(r.plan, r.t, r.middle);
        if (n <= head + tail) {
          expect(r.text).toBe(full);
          expect(footer).toBe("");
          expect(r.t.truncated).toBe(false);
        } else {
          expect(r.middle).toEqual({ from: head + 1, to: head + 1 });
          expect(footer).toContain(`[To see line ${(head + 1).toLocaleString("en-US")}: read`);
          expect(r.text).toContain(`[… 1 line omitted (`);
        }
      }
    }
  });

  it("tail and head alone at their caps ±1 lines", () => {
    for (const kind of ["head", "tail"] as const) {
      for (const n of [MAX_WINDOW_LINES - 1, MAX_WINDOW_LINES, MAX_WINDOW_LINES + 1]) {
        const full = Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");
        const r = shown({ [kind]: MAX_WINDOW_LINES, maxBytes: MAX_WINDOW_BYTES }, full);
        const footer = windowFooter(r.plan, r.t, r.middle);
        if (n <= MAX_WINDOW_LINES) expect(footer).toBe("");
        else {
          const range = kind === "tail" ? omittedBeforeTail(r.t) : omittedAfterHead(r.t);
          expect(range).toEqual(kind === "tail" ? { from: 1, to: 1 } : { from: n, to: n });
          const line = (kind === "tail" ? 1 : n).toLocaleString("en-US");
          expect(footer).toContain(`[To see line ${line}: read`);
        }
      }
    }
  });

  it("names the read that shows the first 2,000 of a long omitted range, and says to continue", () => {
    const full = Array.from({ length: 5000 }, (_, i) => `${i}\n`).join("");
    const r = shown({ tail: 10 }, full);
    const footer = windowFooter(r.plan, r.t, r.middle);
    expect(footer).toBe(
      `[Showing lines 4,991–5,000 of 5,000. Full output: ${SPILL}]\n` +
        `[To see lines 1–4,990: read {"path":"${SPILL}","offset":1,"limit":2000}, then continue from the offset its footer gives; to search it, grep {"path":"${SPILL}"}]`,
    );
  });
});
