// How a page or `toolwire attach` keeps its emulator on a tty call's screen (decision
// 191): it paints first, then writes the window's bytes past the painted byte, never one
// twice or out of order, and paints again when more came than the window keeps.
import { describe, expect, it } from "vitest";
import { TerminalFeed, type TerminalSink, tailBytes } from "../../../src/client/terminal-feed.ts";
import type { TerminalPaint } from "../../../src/protocol/index.ts";

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

function recorder() {
  const got: string[] = [];
  const sink: TerminalSink = {
    repaint: (paint) => got.push(`[paint ${paint.atByte}]${paint.data}`),
    write: (bytes) => got.push(decode(bytes)),
  };
  return { got, sink };
}

const paintAt = (atByte: number, data = "SCREEN"): TerminalPaint => ({
  cols: 80,
  rows: 24,
  data,
  atByte,
});
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("tailBytes", () => {
  it("takes the last bytes of UTF-8, across multi-byte characters", () => {
    expect(decode(tailBytes("héllo", 3) ?? new Uint8Array())).toBe("llo");
    expect(tailBytes("héllo", 6)?.length).toBe(6);
    expect(decode(tailBytes("a😀", 4) ?? new Uint8Array())).toBe("😀");
    expect(tailBytes("abc", 3)?.length).toBe(3);
    expect(tailBytes("abc", 4)).toBeNull();
    expect(tailBytes("", 0)?.length).toBe(0);
  });
});

describe("TerminalFeed", () => {
  it("paints once, then writes only the bytes past the painted one", async () => {
    const { got, sink } = recorder();
    const feed = new TerminalFeed(sink, async () => paintAt(3));
    feed.update("abcde", 5);
    feed.update("abcdef", 6); // while the paint is on its way
    await flush();
    expect(got).toEqual(["[paint 3]SCREEN", "def"]);
    feed.update("abcdefgh", 8);
    feed.update("abcdefgh", 8);
    expect(got.slice(2)).toEqual(["gh"]);
    expect(feed.fed).toBe(8);
  });

  it("waits when the paint is ahead of the window", async () => {
    const { got, sink } = recorder();
    const feed = new TerminalFeed(sink, async () => paintAt(10));
    feed.update("abc", 3);
    await flush();
    feed.update("abcdefgh", 8);
    expect(got).toEqual(["[paint 10]SCREEN"]);
    feed.update("abcdefghijkl", 12);
    expect(got.slice(1)).toEqual(["kl"]);
  });

  it("paints again when more came than the window keeps", async () => {
    const { got, sink } = recorder();
    let paints = 0;
    const feed = new TerminalFeed(sink, async () =>
      paintAt(paints++ === 0 ? 2 : 100, `P${paints}`),
    );
    feed.update("ab", 2);
    await flush();
    // The window slid: 100 bytes in all, only its last 4 kept.
    feed.update("wxyz", 100);
    await flush();
    expect(got).toEqual(["[paint 2]P1", "[paint 100]P2"]);
  });

  it("says when the screen could not be painted, and tries again at the next update", async () => {
    const { got, sink } = recorder();
    const failures: unknown[] = [];
    let tries = 0;
    const feed = new TerminalFeed(sink, async () => {
      if (tries++ === 0) throw new Error("ended");
      return paintAt(1);
    });
    feed.onPaintFailed = (error) => failures.push(error);
    feed.update("a", 1);
    await flush();
    expect(failures).toHaveLength(1);
    feed.update("ab", 2);
    await flush();
    expect(got).toEqual(["[paint 1]SCREEN", "b"]);
  });

  it("replays a settled call's window from a fresh screen", () => {
    const { got, sink } = recorder();
    const feed = new TerminalFeed(sink, async () => paintAt(0));
    feed.replay("done\r\n", 6, { cols: 80, rows: 24 });
    expect(got).toEqual(["[paint 0]", "done\r\n"]);
    expect(feed.fed).toBe(6);
  });
});
