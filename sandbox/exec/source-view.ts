import { type OutputPolicy, TextWindow, type Truncation } from "../../src/core/output/index.ts";
import { countNewlines } from "./newlines.ts";

/**
 * The position of a view's text in the stream of everything ever appended to it:
 * the text covers UTF-16 units `[dropped, appended)`. Consumers compare their last
 * published position with the current one to derive `append` / `slide` updates.
 */
export interface ViewPosition {
  dropped: number;
  appended: number;
}

/** A raw chunk waiting to be decoded, or (`null`) the end of the stream. */
type Pending = Uint8Array | null;

/**
 * Raw bytes of the tail kept beyond `maxBytes` once the window is full: enough that,
 * with up to 3 bytes of an unfinished character held back, the window still
 * receives more than `maxBytes` bytes and so cuts where it would have.
 */
const TAIL_SLACK_BYTES = 16;

/**
 * A command's bounded view over its raw output: the one stream (stdout and stderr
 * together) its spill file holds, read back in order.
 *
 * Totals (`totalBytes`, `totalLines`) count the raw stream exactly, as the spill file
 * holds it. The retained text is a `TextWindow` fed through one streaming UTF-8
 * decoder, so a character split across chunks stays whole.
 *
 * Once the window is past its cap, chunks are no longer decoded as they arrive: they
 * wait, raw, and only the last `maxBytes + 16` bytes are kept (head mode keeps none:
 * a full head window never changes). Reading the view decodes what is kept. This turns
 * per-character work on text that would be dropped at once into a `memchr` for
 * newlines (decision 032); a property test checks the view equals a window fed
 * everything.
 *
 * `release` (optional) is called once for every non-empty chunk, when the view will not read it again,
 * so its owner may free the memory at once instead of waiting for the garbage collector
 * (decision 037). The view keeps no view onto a released chunk.
 * @example
 * const view = new SourceView({ retain: "tail", maxBytes: 51200, maxLines: 2000 });
 * view.push(Buffer.from("hello\n"));
 * view.text; // "hello\n"
 */
export class SourceView {
  readonly #policy: OutputPolicy;
  readonly #release: (bytes: Uint8Array) => void;
  readonly #window: TextWindow;
  readonly #at: ViewPosition = { dropped: 0, appended: 0 };
  #decoder = new TextDecoder();
  /** Last bytes (at most 3) the decoder was fed: what it may hold of an unfinished character. */
  #fedTail: Uint8Array = EMPTY;
  /**
   * Once chunks were skipped: the bytes of a character the skipped chunks left
   * unfinished. The decoder restarts with them, so that character still appears where
   * its last byte arrives.
   */
  #carry: Uint8Array | null = null;
  #full = false;
  #pending: Pending[] = [];
  #pendingBytes = 0;
  #totalBytes = 0;
  #newlines = 0;
  #lastByte = -1;

  constructor(policy: OutputPolicy, release: (bytes: Uint8Array) => void = () => {}) {
    this.#policy = policy;
    this.#release = release;
    this.#window = new TextWindow(policy);
  }

  /** Adds a raw chunk; `newlines` when the caller has counted them already. */
  push(bytes: Uint8Array, newlines = countNewlines(bytes)): void {
    if (bytes.length === 0) return;
    this.#totalBytes += bytes.length;
    this.#newlines += newlines;
    this.#lastByte = bytes[bytes.length - 1]!;
    if (!this.#full) {
      this.#decode(this.#decodedPart(bytes));
      this.#release(bytes);
      this.#full = this.#window.truncation().truncated;
      return;
    }
    if (this.#policy.retain === "head") {
      this.#release(bytes);
      return;
    }
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    const keep = this.#policy.maxBytes + TAIL_SLACK_BYTES;
    while (this.#pending.length > 1 && this.#pendingBytes - sizeOf(this.#pending[0]!) >= keep) {
      const skipped = this.#pending.shift()!;
      this.#pendingBytes -= sizeOf(skipped);
      this.#skip(skipped);
      if (skipped) this.#release(skipped);
    }
  }

  /**
   * Takes `length` raw bytes without their contents, for a full view that
   * will not keep them: a tail view must get at least `maxBytes + 16` bytes pushed
   * right after (so nothing before them can be kept, as `push` would conclude), a head
   * view never keeps anything again. `last` is the range's last (up to 3) bytes: all a
   * skipped range leaves behind is an unfinished character's start, and whether it
   * ended a line. The copier counted `newlines` (decision 087).
   */
  skipFull(length: number, newlines: number, last: Uint8Array): void {
    if (!this.#full) throw new Error("skipFull: the view is not full");
    if (length === 0) return;
    this.#totalBytes += length;
    this.#newlines += newlines;
    this.#lastByte = last[last.length - 1]!;
    if (this.#policy.retain === "head") return;
    for (const bytes of this.#pending) {
      this.#skip(bytes);
      if (bytes) this.#release(bytes);
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#skip(last);
  }

  /**
   * What of a chunk reaching a view that is not full yet needs decoding: all of it when
   * it is small; of a chunk larger than `maxBytes + 16`, only the part the window can
   * still keep, which fills it. A tail window gets the last bytes (the front is skipped
   * as a full view skips chunks, keeping an unfinished character's start); a head window
   * the first (it is full after them and never decodes again). A 1 MiB read of `y\n` no
   * longer becomes a 1 MiB string and 500 K line starts in the window (decision 085).
   */
  #decodedPart(bytes: Uint8Array): Uint8Array {
    const keep = this.#policy.maxBytes + TAIL_SLACK_BYTES;
    if (bytes.length <= keep) return bytes;
    if (this.#policy.retain === "head") return bytes.subarray(0, keep);
    const front = bytes.subarray(0, bytes.length - keep);
    this.#carry = unfinishedTail(lastThree(this.#carry ?? this.#fedTail, front));
    return bytes.subarray(bytes.length - keep);
  }

  /** The stream ended: a sequence cut short at its end decodes as U+FFFD. */
  end(): void {
    if (!this.#full) this.#decode(null);
    else if (this.#policy.retain === "tail") this.#pending.push(null);
  }

  /** True once the cap has been exceeded. */
  get truncated(): boolean {
    return this.#full;
  }

  /** The retained text. */
  get text(): string {
    this.#sync();
    return this.#window.text;
  }

  /** Where the retained text sits in everything appended to the window. */
  get position(): ViewPosition {
    this.#sync();
    return { ...this.#at };
  }

  /** Exact totals of the raw stream, and measures of the retained text. */
  truncation(): Truncation {
    this.#sync();
    const t = this.#window.truncation();
    t.totalBytes = this.#totalBytes;
    t.totalLines = this.#newlines + (this.#totalBytes > 0 && this.#lastByte !== 10 ? 1 : 0);
    return t;
  }

  #feed(text: string): void {
    if (text === "") return;
    const change = this.#window.append(text);
    this.#at.dropped += change.drop;
    this.#at.appended += change.append.length;
  }

  #sync(): void {
    if (this.#pending.length === 0) return;
    const pending = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    const [first, offset] = this.#linesCut(pending);
    for (let i = 0; i < pending.length; i++) {
      const bytes = pending[i]!;
      if (i < first) this.#skip(bytes);
      else if (i === first && bytes && offset > 0) {
        // The skipped front ends with "\n", so no character is cut: the decoder restarts.
        this.#skip(bytes.subarray(0, offset));
        this.#decode(bytes.subarray(offset));
      } else this.#decode(bytes);
      if (bytes) this.#release(bytes);
    }
  }

  /**
   * Where the last `maxLines + 1` lines of the pending chunks start (chunk index, byte
   * offset), when they hold that many; else `[0, 0]`. A tail window keeps at most
   * `maxLines` lines, so one more makes it cut exactly where it would have with
   * everything, and the lines before need no decoding: with `y\n`, 4 KB instead of
   * 50 KiB per read of the view (decision 085). "\n" is one byte in UTF-8 and never
   * part of another character, so the cut is also a character boundary.
   */
  #linesCut(pending: Pending[]): [number, number] {
    let last = pending.length - 1;
    while (last >= 0 && !pending[last]) last--;
    if (last < 0) return [0, 0];
    // One line more than the window keeps, and one for the last line, ended or not.
    let need = this.#policy.maxLines + 2;
    for (let i = last; i >= 0; i--) {
      const bytes = pending[i];
      if (!bytes) continue;
      for (let at = bytes.length - 1; at >= 0; at--) {
        at = bytes.lastIndexOf(10, at);
        if (at < 0) break;
        if (--need === 0) return at + 1 === bytes.length ? [i + 1, 0] : [i, at + 1];
      }
    }
    return [0, 0];
  }

  /** A chunk (or end) the window will not keep: only an unfinished character's start is carried. */
  #skip(bytes: Uint8Array | null): void {
    const before = this.#carry ?? this.#fedTail;
    this.#carry = bytes ? unfinishedTail(lastThree(before, bytes)) : EMPTY;
  }

  /** Decodes a chunk (or, for null, the end) into the window. */
  #decode(bytes: Uint8Array | null): void {
    const carry = this.#carry;
    if (carry) {
      this.#carry = null;
      this.#decoder = new TextDecoder();
      if (carry.length > 0) this.#feed(this.#decoder.decode(carry, { stream: true }));
    }
    if (!bytes) {
      this.#feed(this.#decoder.decode());
      return;
    }
    // A copy (`new Uint8Array` of a view): `bytes` may be released once decoded.
    this.#fedTail = new Uint8Array(
      (bytes.length >= 3 ? bytes : concat(this.#fedTail, bytes)).subarray(-3),
    );
    this.#feed(this.#decoder.decode(bytes, { stream: true }));
  }
}

function sizeOf(p: Pending): number {
  return p?.length ?? 0;
}

const EMPTY = new Uint8Array(0);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The last (at most) 3 bytes of `a` followed by `b`: all `unfinishedTail` looks at. Not
 * a concatenation of the whole chunk, which cost a copy of every skipped chunk.
 */
function lastThree(a: Uint8Array, b: Uint8Array): Uint8Array {
  return b.length >= 3 ? b.subarray(b.length - 3) : concat(a, b).subarray(-3);
}

/**
 * The bytes at the end of `bytes` that start a UTF-8 character without finishing it
 * (at most 3, copied), or an empty array when the last character is complete.
 */
function unfinishedTail(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? new Uint8Array(bytes.subarray(bytes.length - back)) : EMPTY;
  }
  return EMPTY;
}
