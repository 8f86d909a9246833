/**
 * `TextQueue`: a text kept as a queue of string chunks whose front is cut lazily, so
 * appending costs what is appended and dropping costs what is dropped, never the whole
 * text. The string buffer of the text-bounding engine (the byte buffers are `HeadBuffer`
 * and `TailRing`); `TextWindow` keeps its retained text in one.
 */
import { utf8ByteLength, utf8ReachCut } from "./utf8.ts";

/** Dropped units of one chunk after which its kept part is copied out (see `#compact`). */
const RELEASE_AFTER = 65_536;

/** What a drop removed: UTF-16 units, UTF-8 bytes and "\n" characters. */
interface Dropped {
  units: number;
  bytes: number;
  newlines: number;
}

/**
 * A string built by appends and cut from the front, measured as it is cut. A surrogate
 * pair must not be split across two appends (the caller holds a trailing high surrogate
 * back until the next append, as `TextWindow` does).
 * @example
 * const q = new TextQueue();
 * q.push("héllo\n"); q.push("world");
 * q.drop(3);       // { units: 3, bytes: 4, newlines: 0 }
 * q.text();        // "llo\nworld"
 */
export class TextQueue {
  #chunks: string[] = [];
  #first = 0;
  /** Units already removed from `#chunks[#first]`. */
  #offset = 0;
  #joined: string | null = "";

  push(s: string): void {
    if (s.length === 0) return;
    this.#chunks.push(s);
    this.#joined = null;
  }

  /** Removes `n` units from the front; returns their UTF-8 bytes and "\n" count. */
  drop(n: number): Dropped {
    const units = n;
    let bytes = 0;
    let newlines = 0;
    while (n > 0) {
      const c = this.#chunks[this.#first]!;
      const take = Math.min(n, c.length - this.#offset);
      bytes += utf8ByteLength(c, this.#offset, this.#offset + take);
      for (let i = this.#offset; i < this.#offset + take; i++)
        if (c.charCodeAt(i) === 10) newlines++;
      n -= take;
      this.#offset += take;
      if (this.#offset === c.length) {
        this.#first++;
        this.#offset = 0;
      }
    }
    this.#compact();
    this.#joined = null;
    return { units, bytes, newlines };
  }

  /**
   * Removes the fewest whole characters from the front so that at least `bytes` bytes go;
   * returns the units and bytes removed.
   */
  dropBytes(bytes: number): { units: number; bytes: number } {
    let units = 0;
    let removed = 0;
    while (removed < bytes && this.#first < this.#chunks.length) {
      const c = this.#chunks[this.#first]!;
      const cut = utf8ReachCut(c, bytes - removed, this.#offset);
      units += cut.end - this.#offset;
      removed += cut.bytes;
      this.#offset = cut.end;
      if (this.#offset === c.length) {
        this.#first++;
        this.#offset = 0;
      }
    }
    this.#compact();
    this.#joined = null;
    return { units, bytes: removed };
  }

  /** True if the unit at `i` (counted from the front) is the low half of a pair. */
  splitsPair(i: number): boolean {
    if (i <= 0) return false;
    let k = this.#first;
    let at = this.#offset + i;
    while (k < this.#chunks.length && at >= this.#chunks[k]!.length) {
      at -= this.#chunks[k]!.length;
      k++;
    }
    if (k >= this.#chunks.length || at === 0) return false;
    const c = this.#chunks[k]!;
    const low = c.charCodeAt(at);
    const high = c.charCodeAt(at - 1);
    return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
  }

  /** The text, joined once per change and kept as one chunk. */
  text(): string {
    if (this.#joined === null) {
      const live = this.#chunks.slice(this.#first);
      if (live.length > 0) live[0] = live[0]!.slice(this.#offset);
      this.#joined = live.join("");
      this.#chunks = this.#joined.length > 0 ? [this.#joined] : [];
      this.#first = 0;
      this.#offset = 0;
    }
    return this.#joined;
  }

  clear(): void {
    this.#chunks = [];
    this.#first = 0;
    this.#offset = 0;
    this.#joined = "";
  }

  #compact(): void {
    // A huge write mostly dropped would otherwise stay alive through the slice that keeps
    // its tail: copy the kept part once the dropped part is large (cost ∝ what was dropped).
    const head = this.#chunks[this.#first];
    if (head !== undefined && this.#offset >= RELEASE_AFTER && this.#offset * 2 > head.length) {
      this.#chunks[this.#first] = JSON.parse(JSON.stringify(head.slice(this.#offset))) as string;
      this.#offset = 0;
    }
    if (this.#first > 64 && this.#first * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#first);
      this.#first = 0;
    }
  }
}
