import type { ToolOutputState } from "../core/output/types.ts";

/** What is new since the previous state: print `text` after saying `skippedBytes` were missed. */
export interface FollowStep {
  text: string;
  /** Bytes the totals count that this text does not show (joining late, a burst between two states, a capped head). */
  skippedBytes: number;
  /** The new text does not continue the old one (replaced, or jumped ahead by an unknown amount); `text` is all of it. */
  restarted: boolean;
}

const encoder = new TextEncoder();
const utf8Length = (s: string): number => encoder.encode(s).length;

/**
 * Follows the text block of successive states and yields only what is new, so a
 * terminal can print a sliding window without printing anything twice. Totals
 * (`truncation.totalBytes`, everything ever written) tell how much was appended when
 * the window moved; when they disagree with the text (a `replace`, a lossy decode),
 * the longest overlap between the old end and the new start decides.
 *
 * @example
 * const f = new OutputFollower();
 * f.next(stateWithText("a\nb\n")).text // "a\nb\n"
 * f.next(stateWithText("b\nc\n")).text // "c\n" (the window slid by one line)
 */
export class OutputFollower {
  readonly #retain: "head" | "tail";
  #text: string | null = null;
  #totalBytes = 0;

  /**
   * `retain` is the tool's policy (`GET /v1/tools`): a tail window slides, a head stops
   * growing at its cap. Unknown means tail, the default policy.
   */
  constructor(retain: "head" | "tail" = "tail") {
    this.#retain = retain;
  }

  next(state: ToolOutputState): FollowStep {
    const first = state.content[0];
    const next = first?.type === "text" ? first.text : "";
    const total = state.truncation.totalBytes;
    const step = this.#diff(next, total);
    this.#text = next;
    this.#totalBytes = total;
    return step;
  }

  #diff(next: string, total: number): FollowStep {
    const prev = this.#text;
    if (prev === null) {
      // Joining: what the totals count beyond the window was not seen.
      return { text: next, skippedBytes: Math.max(0, total - utf8Length(next)), restarted: false };
    }
    const written = total - this.#totalBytes;
    if (written > 0) return this.#grown(prev, next, written);
    // Totals did not move (or started over after a `replace`): only the texts can tell.
    if (next === prev) return { text: "", skippedBytes: 0, restarted: false };
    if (next.startsWith(prev)) {
      return { text: next.slice(prev.length), skippedBytes: 0, restarted: false };
    }
    const overlap = longestOverlap(prev, next);
    if (overlap > 0) return { text: next.slice(overlap), skippedBytes: 0, restarted: false };
    return { text: next, skippedBytes: 0, restarted: true };
  }

  /**
   * The totals say `written` bytes arrived: they are the truth, whatever the texts look
   * like (a window of repeated lines can slide and look unchanged). Every one of those
   * bytes is either printed or reported as skipped.
   */
  #grown(prev: string, next: string, written: number): FollowStep {
    if (this.#retain === "tail") {
      const nextBytes = utf8Length(next);
      if (written >= nextBytes) {
        return { text: next, skippedBytes: written - nextBytes, restarted: false };
      }
      const added = suffixOfBytes(next, written);
      if (added !== null && prev.endsWith(next.slice(0, next.length - added.length))) {
        return { text: added, skippedBytes: 0, restarted: false };
      }
    }
    // The text did not move by `written` bytes: a head that filled up (the rest is not
    // shown anywhere), or a text that started over. Print what is new; the rest was skipped.
    let text = next;
    let restarted = false;
    if (next.startsWith(prev)) text = next.slice(prev.length);
    else {
      const overlap = longestOverlap(prev, next);
      if (overlap > 0) text = next.slice(overlap);
      else restarted = true;
    }
    return { text, skippedBytes: Math.max(0, written - utf8Length(text)), restarted };
  }
}

/** The suffix of `s` that is exactly `bytes` UTF-8 bytes long, or null if that would split a character. */
function suffixOfBytes(s: string, bytes: number): string | null {
  let count = 0;
  let i = s.length;
  while (i > 0 && count < bytes) {
    const low = s.charCodeAt(i - 1);
    const pair = i >= 2 && low >= 0xdc00 && low <= 0xdfff && isHighSurrogate(s.charCodeAt(i - 2));
    const width = pair ? 2 : 1;
    count += utf8Length(s.slice(i - width, i));
    i -= width;
  }
  return count === bytes ? s.slice(i) : null;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Length of the longest suffix of `prev` that is a prefix of `next`. */
function longestOverlap(prev: string, next: string): number {
  const probe = next.slice(0, Math.min(64, next.length));
  if (probe === "") return 0;
  let from = Math.max(0, prev.length - next.length);
  // A bounded number of candidates keeps repetitive text from going quadratic.
  for (let candidates = 0; candidates < 16; candidates++) {
    const at = prev.indexOf(probe, from);
    if (at === -1) break;
    if (next.startsWith(prev.slice(at))) return prev.length - at;
    from = at + 1;
  }
  // A short overlap is only trusted in a tiny window; in a real one it is a coincidence.
  if (prev.length >= 64) return 0;
  for (let k = Math.min(probe.length - 1, prev.length); k > 0; k--) {
    if (prev.endsWith(next.slice(0, k))) return k;
  }
  return 0;
}
