/**
 * Keeps a terminal emulator (xterm.js in a page, or a person's own terminal) showing a
 * tty call's screen from what a subscriber folds (decision 191). The call's text window
 * holds the terminal's raw bytes (escapes included) and its totals count them, so the
 * bytes since the emulator's last one are the window's last bytes. A feed that joins
 * late, or falls further behind than the window holds, first paints the screen the host
 * has (`GET /terminal`), then writes the output from the byte that screen shows on.
 */
import type { TerminalPaint } from "../protocol/index.ts";

const encoder = new TextEncoder();

/** Where the feed writes: an emulator (or a stdout) taking raw terminal bytes. */
export interface TerminalSink {
  /** Starts over on a fresh screen of the painted size, then draws `paint.data`. */
  repaint(paint: TerminalPaint): void;
  write(bytes: Uint8Array): void;
}

/**
 * The last `bytes` bytes of `text` in UTF-8; null when the text holds fewer.
 * @example tailBytes("héllo", 2) // Uint8Array [108, 111]
 */
export function tailBytes(text: string, bytes: number): Uint8Array | null {
  // A UTF-16 unit is at least one UTF-8 byte: the last `bytes + 1` units hold them all
  // (the one more keeps a surrogate pair whole at the cut).
  const encoded = encoder.encode(text.slice(-(bytes + 1)));
  if (encoded.length < bytes) return null;
  return encoded.subarray(encoded.length - bytes);
}

export class TerminalFeed {
  readonly #sink: TerminalSink;
  readonly #paint: () => Promise<TerminalPaint>;
  /** Output bytes the emulator has taken in; null until its first paint. */
  #fed: number | null = null;
  #painting = false;
  #latest: { text: string; totalBytes: number } | null = null;

  constructor(sink: TerminalSink, paint: () => Promise<TerminalPaint>) {
    this.#sink = sink;
    this.#paint = paint;
  }

  /** Output bytes shown so far (null before the first paint). */
  get fed(): number | null {
    return this.#fed;
  }

  /** The call's window text and its total bytes, as the subscriber folded them. */
  update(text: string, totalBytes: number): void {
    this.#latest = { text, totalBytes };
    if (this.#fed === null) {
      void this.#repaint();
      return;
    }
    this.#catchUp();
  }

  /** Draws the whole window from a fresh screen: a settled call, or a host that no longer paints. */
  replay(text: string, totalBytes: number, size: { cols: number; rows: number }): void {
    this.#sink.repaint({ ...size, data: "", atByte: 0 });
    this.#sink.write(encoder.encode(text));
    this.#fed = totalBytes;
  }

  #catchUp(): void {
    const latest = this.#latest;
    if (!latest || this.#fed === null || latest.totalBytes <= this.#fed) return;
    const bytes = tailBytes(latest.text, latest.totalBytes - this.#fed);
    if (bytes === null) {
      // More came than the window keeps: start again from the host's screen.
      this.#fed = null;
      void this.#repaint();
      return;
    }
    this.#sink.write(bytes);
    this.#fed = latest.totalBytes;
  }

  async #repaint(): Promise<void> {
    if (this.#painting) return;
    this.#painting = true;
    try {
      const paint = await this.#paint();
      this.#sink.repaint(paint);
      this.#fed = paint.atByte;
      this.#catchUp();
    } catch (error) {
      this.onPaintFailed(error);
    } finally {
      this.#painting = false;
    }
  }

  /** Called when the screen could not be painted (the call ended meanwhile, a lost connection). */
  onPaintFailed: (error: unknown) => void = () => {};
}
