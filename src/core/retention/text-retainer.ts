import { assertBudget } from "./budget.ts";
import { HeadBuffer } from "./head-buffer.ts";
import { Omitted } from "./omitted.ts";
import { TailRing } from "./tail-ring.ts";
import { utf8ByteLength, utf8HeadIndex, utf8TailIndex } from "./utf8.ts";

/**
 * Which part of a text survives its byte budget:
 * - `head`: the first `maxBytes`; with `stop: "stopWhenFull"` pushes ask the producer to
 *   stop once the budget is proven exceeded (default `"readToEnd"`: count everything);
 * - `tail`: the last `maxBytes`;
 * - `headTail`: the first `headBytes` and the last `tailBytes`, or everything if it fits
 *   in `headBytes + tailBytes`.
 */
export type TextRetainerOptions =
  | { kind: "head"; maxBytes: number; stop?: "stopWhenFull" | "readToEnd" }
  | { kind: "tail"; maxBytes: number }
  | { kind: "headTail"; headBytes: number; tailBytes: number };

interface TextPush {
  /** The producer should stop feeding (head with `stopWhenFull`, once the budget is exceeded). */
  shouldStop: boolean;
}

export interface TextRetention {
  /** The retained text; its UTF-8 encoding never exceeds the budget. */
  text: string;
  /** Cut by the budget (never "upstream incomplete"). */
  truncated: boolean;
  /**
   * How much of the input `text` leaves out (the retention RFC's `RetainedText`):
   * `none`, `exact(bytes)`, or `atLeast(bytes)` when a `stopWhenFull` head asked the
   * producer to stop (more may never have been read).
   */
  omittedBytes: Omitted;
  /** The count behind `omittedBytes`: input bytes pushed and not represented in `text`. */
  omittedByteCount: number;
  /** Input bytes pushed. */
  totalBytes: number;
  /**
   * Where in `text` (a UTF-16 index) the omitted bytes were: `text.length` for a head,
   * 0 for a tail, between the two parts for head+tail. Present only when truncated, so a
   * caller can insert its own marker there.
   */
  omittedAt?: number;
}

const encoder = new TextEncoder();

/**
 * Keeps a bounded part of a text fed as strings or bytes (UTF-8), in memory near the
 * budget however long the input. Cuts fall between characters; a character cut in two
 * is dropped whole and counted as omitted. Invalid bytes decode to U+FFFD and are
 * measured as the 3 bytes they become, so the result never outgrows the budget.
 * Byte chunks may split characters anywhere: the result is the same as for one chunk.
 * @example
 * const r = new TextRetainer({ kind: "tail", maxBytes: 5 });
 * r.push("hello "); r.push(new TextEncoder().encode("wörld"));
 * r.finish(); // { text: "örld", truncated: true, omittedBytes: { kind: "exact", count: 7 }, omittedByteCount: 7, omittedAt: 0, ... }
 */
export class TextRetainer {
  readonly options: TextRetainerOptions;
  readonly #head: HeadBuffer | undefined;
  readonly #ring: TailRing | undefined;
  readonly #stopWhenFull: boolean;
  #total = 0;
  #result: TextRetention | undefined;

  constructor(options: TextRetainerOptions) {
    this.options = options;
    switch (options.kind) {
      case "head":
        if (
          options.stop !== undefined &&
          options.stop !== "stopWhenFull" &&
          options.stop !== "readToEnd"
        ) {
          throw new TypeError(
            `TextRetainer: stop must be "stopWhenFull" or "readToEnd", got ${JSON.stringify(options.stop)}.`,
          );
        }
        this.#head = new HeadBuffer(assertBudget("TextRetainer", "maxBytes", options.maxBytes));
        this.#stopWhenFull = options.stop === "stopWhenFull";
        break;
      case "tail":
        this.#ring = new TailRing(assertBudget("TextRetainer", "maxBytes", options.maxBytes));
        this.#stopWhenFull = false;
        break;
      case "headTail":
        this.#head = new HeadBuffer(assertBudget("TextRetainer", "headBytes", options.headBytes));
        this.#ring = new TailRing(assertBudget("TextRetainer", "tailBytes", options.tailBytes));
        this.#stopWhenFull = false;
        break;
      default:
        throw new TypeError(
          `TextRetainer: kind must be "head", "tail" or "headTail", got ${JSON.stringify((options as { kind: unknown }).kind)}.`,
        );
    }
  }

  /** Input bytes pushed so far. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes of memory the retainer holds for text: bounded by the budget, not the input. */
  get allocatedBytes(): number {
    return (this.#head?.allocatedBytes ?? 0) + (this.#ring?.allocatedBytes ?? 0);
  }

  /** Feed the next piece: a string, or bytes of UTF-8 (split anywhere). */
  push(chunk: string | Uint8Array): TextPush {
    if (this.#result) throw new Error("TextRetainer: push() after finish().");
    if (typeof chunk === "string") this.#pushString(chunk);
    else if (chunk instanceof Uint8Array) this.#pushBytes(chunk);
    else {
      const got =
        chunk === null
          ? "null"
          : typeof chunk === "object"
            ? Object.prototype.toString.call(chunk)
            : typeof chunk;
      throw new TypeError(`TextRetainer: push() takes a string or a Uint8Array, got ${got}.`);
    }
    return { shouldStop: this.#stopWhenFull && this.#head!.closed };
  }

  /** The retained text and what was omitted. Later calls return the same result. */
  finish(): TextRetention {
    if (!this.#result) this.#result = this.#compute();
    return this.#result;
  }

  #pushBytes(bytes: Uint8Array): void {
    this.#total += bytes.length;
    const head = this.#head;
    let rest = bytes;
    if (head && !head.closed) {
      const used = head.write(bytes);
      if (!head.closed) return;
      this.#ring?.write(head.overflow());
      rest = bytes.subarray(used);
    }
    this.#ring?.write(rest);
  }

  #pushString(s: string): void {
    const head = this.#head;
    if (head && !head.closed) {
      // Encode only what can still matter: a prefix longer than the room left closes the head.
      const room = head.maxOut - head.keptBytes + 4;
      const cut = utf8HeadIndex(s, room);
      this.#pushBytes(encoder.encode(cut === s.length ? s : s.slice(0, cut)));
      if (cut === s.length) return;
      s = s.slice(cut);
    }
    const ring = this.#ring;
    if (!ring) {
      this.#total += utf8ByteLength(s);
      return;
    }
    if (s.length > ring.capacity) {
      // Only the last `capacity` bytes survive in the ring: count the rest, encode the end.
      const cut = utf8TailIndex(s, ring.capacity + 3);
      const skipped = utf8ByteLength(s, 0, cut);
      this.#total += skipped;
      ring.skip(skipped);
      s = s.slice(cut);
    }
    this.#pushBytes(encoder.encode(s));
  }

  #compute(): TextRetention {
    // ignoreBOM keeps a leading U+FEFF as text: at a cut it is content, not a marker.
    const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
    const head = this.#head;
    const ring = this.#ring;
    let headText = "";
    let kept = 0;
    // Only a producer that was asked to stop leaves an unknown amount unread.
    const stopped = this.#stopWhenFull && head?.closed === true;
    if (head) {
      const wasClosed = head.closed;
      head.end();
      headText = head.text(decoder);
      kept += head.keptBytes;
      // An unfinished sequence at the very end that did not fit belongs to the tail.
      if (!wasClosed) ring?.write(head.overflow());
    }
    let text = headText;
    if (ring) {
      const headOut = utf8ByteLength(headText);
      const budget = (head?.maxOut ?? 0) + ring.maxOut;
      const tail = ring.tail(decoder, (size) => headOut + size <= budget);
      text += tail.text;
      kept += tail.keptBytes;
    }
    const omittedByteCount = this.#total - kept;
    const truncated = omittedByteCount > 0;
    const result: TextRetention = {
      text,
      truncated,
      omittedBytes: !truncated
        ? Omitted.none()
        : stopped
          ? Omitted.atLeast(omittedByteCount)
          : Omitted.exact(omittedByteCount),
      omittedByteCount,
      totalBytes: this.#total,
    };
    if (truncated) result.omittedAt = headText.length;
    return result;
  }
}
