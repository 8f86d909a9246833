import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputFollower } from "../../../src/client/index.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import { emptyState } from "./fake-producer.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

/** A tail window by UTF-16 length over everything written (enough for the follower, which only sees states). */
function stateOf(all: string, window: number): ToolOutputState {
  const state = emptyState();
  let cut = Math.max(0, all.length - window);
  // Like the sink, never cut a character in half.
  if (/[\udc00-\udfff]/.test(all[cut] ?? "")) cut++;
  state.content[0] = { type: "text", text: all.slice(cut) };
  state.truncation.totalBytes = bytes(all);
  return state;
}

describe("OutputFollower", () => {
  it("prints appended text once", () => {
    const f = new OutputFollower();
    expect(f.next(stateOf("a\n", 100)).text).toBe("a\n");
    expect(f.next(stateOf("a\nb\n", 100)).text).toBe("b\n");
    expect(f.next(stateOf("a\nb\n", 100)).text).toBe("");
  });

  it("prints only the new end when the window slides", () => {
    const f = new OutputFollower();
    f.next(stateOf("one\ntwo\n", 8));
    expect(f.next(stateOf("one\ntwo\nsix\n", 8))).toEqual({
      text: "six\n",
      skippedBytes: 0,
      restarted: false,
    });
  });

  it("says how much it missed when more than a window was written in between", () => {
    const f = new OutputFollower();
    f.next(stateOf("abc", 4));
    const step = f.next(stateOf("abcdefghij", 4));
    expect(step).toEqual({ text: "ghij", skippedBytes: 3, restarted: false });
  });

  it("says what was missed before joining", () => {
    expect(new OutputFollower().next(stateOf("0123456789", 4))).toEqual({
      text: "6789",
      skippedBytes: 6,
      restarted: false,
    });
  });

  it("counts multi-byte characters by their UTF-8 bytes", () => {
    const f = new OutputFollower();
    f.next(stateOf("héllo ", 6));
    expect(f.next(stateOf("héllo wörld 😀", 6)).text).toBe("rld 😀");
  });

  it("falls back to the overlap when totals do not move, and restarts on an unrelated text", () => {
    const f = new OutputFollower();
    const s = (text: string) => {
      const state = emptyState();
      state.content[0] = { type: "text", text };
      return state;
    };
    f.next(s("alpha\nbeta\n"));
    expect(f.next(s("beta\ngamma\n")).text).toBe("gamma\n");
    expect(f.next(s("zzz"))).toEqual({ text: "zzz", skippedBytes: 0, restarted: true });
  });

  it("prints everything exactly once when it sees every window (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 8 }), { maxLength: 40 }),
        fc.integer({ min: 12, max: 60 }),
        (writes, window) => {
          const f = new OutputFollower();
          let all = "";
          let printed = "";
          for (const w of writes) {
            all += w;
            const step = f.next(stateOf(all, window));
            expect(step.skippedBytes).toBe(0);
            printed += step.text;
          }
          expect(printed).toBe(all);
        },
      ),
      { seed: 3, numRuns: 1000 },
    );
  });

  it("accounts for every byte as printed or missed, with random gaps (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }), fc.boolean()),
          {
            maxLength: 40,
          },
        ),
        fc.integer({ min: 12, max: 40 }),
        (writes, window) => {
          const f = new OutputFollower();
          let all = "";
          let accounted = 0;
          for (const [w, seen] of writes) {
            all += w;
            if (!seen) continue;
            const step = f.next(stateOf(all, window));
            expect(step.restarted).toBe(false);
            expect(all.endsWith(step.text)).toBe(true);
            accounted += bytes(step.text) + step.skippedBytes;
            expect(accounted).toBe(bytes(all));
          }
        },
      ),
      { seed: 4, numRuns: 1000 },
    );
  });

  it("prints repeated lines that slid in, trusting the totals over equal-looking text", () => {
    const f = new OutputFollower();
    const window = "waiting\n".repeat(4);
    const at = (total: number) => {
      const state = emptyState();
      state.content[0] = { type: "text", text: window };
      state.truncation.totalBytes = total;
      return state;
    };
    f.next(at(32));
    expect(f.next(at(48))).toEqual({
      text: "waiting\nwaiting\n",
      skippedBytes: 0,
      restarted: false,
    });
    expect(f.next(at(48)).text).toBe("");
  });

  it("prints every line of `seq`-like repetitive output through a 2,000-line window", () => {
    const f = new OutputFollower();
    let all = "";
    let printed = "";
    let skipped = 0;
    for (let i = 0; i < 3000; i++) {
      all += "ok\n";
      if (i % 7 !== 0) continue;
      const step = f.next(lineWindow(all, 2000));
      printed += step.text;
      skipped += step.skippedBytes;
    }
    const step = f.next(lineWindow(all, 2000));
    printed += step.text;
    skipped += step.skippedBytes;
    expect(skipped).toBe(0);
    expect(printed).toBe(all);
  });

  it("reports a head that stopped growing as bytes not shown", () => {
    const f = new OutputFollower("head");
    const head = (total: number) => {
      const state = emptyState();
      state.content[0] = { type: "text", text: "first\nsecond\n" };
      state.truncation.totalBytes = total;
      return state;
    };
    f.next(head(13));
    expect(f.next(head(20))).toEqual({ text: "", skippedBytes: 7, restarted: false });
    // More than the head arrived at once: still nothing new to show.
    expect(f.next(head(60))).toEqual({ text: "", skippedBytes: 40, restarted: false });
  });

  it("accounts for every byte of repetitive output over random slides and chunkings (property)", () => {
    const line = fc.constantFrom("ok\n", "waiting\n", "x\n", "ok", "\n");
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            write: fc.array(line, { minLength: 1, maxLength: 12 }),
            seen: fc.boolean(),
            lines: fc.integer({ min: 1, max: 8 }),
            chars: fc.integer({ min: 4, max: 60 }),
          }),
          { maxLength: 50 },
        ),
        (steps) => {
          const f = new OutputFollower();
          let all = "";
          let start = 0;
          let printed = "";
          let accounted = 0;
          for (const { write, seen, lines, chars } of steps) {
            all += write.join("");
            // A tail window whose start never moves back: a line cap, then a char cap.
            start = Math.max(start, lineStart(all, lines), all.length - chars);
            if (!seen) continue;
            const state = emptyState();
            state.content[0] = { type: "text", text: all.slice(start) };
            state.truncation.totalBytes = bytes(all);
            const step = f.next(state);
            expect(all.endsWith(step.text)).toBe(true);
            printed += step.text;
            accounted += bytes(step.text) + step.skippedBytes;
            expect(accounted).toBe(bytes(all));
          }
          expect(isSubsequence(printed, all)).toBe(true);
        },
      ),
      { seed: 21, numRuns: 1500 },
    );
  });
});

/** A tail window of the last `maxLines` lines (the sink's line cap). */
function lineWindow(all: string, maxLines: number): ToolOutputState {
  const state = emptyState();
  state.content[0] = { type: "text", text: all.slice(lineStart(all, maxLines)) };
  state.truncation.totalBytes = bytes(all);
  return state;
}

/** Where the last `maxLines` lines of `all` start (a final partial line counts as one). */
function lineStart(all: string, maxLines: number): number {
  let at = all.endsWith("\n") ? all.length - 1 : all.length;
  for (let n = 0; n < maxLines; n++) {
    const nl = all.lastIndexOf("\n", at - 1);
    if (nl === -1) return 0;
    at = nl;
  }
  return at + 1;
}

function isSubsequence(small: string, big: string): boolean {
  let j = 0;
  for (let i = 0; i < big.length && j < small.length; i++) if (big[i] === small[j]) j++;
  return j === small.length;
}
