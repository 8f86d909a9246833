import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputFollower } from "../../../src/client/index.ts";
import type { ToolOutputState } from "../../../src/output/types.ts";
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
});
