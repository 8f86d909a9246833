/**
 * `ToolOutputSink`: the one `ToolOutput` of an invocation, over one Chord tracker of
 * `ToolOutputState`. Text the sink bounds goes through a `TextWindow` before the tracked
 * state changes; text a source already bounded (after `capture`) goes straight in. Either
 * way the exact change reaches the tracker as an edit, so a sliding window flushes as
 * `t` + `a`. See docs/decisions/021, 022 and 014.
 */
import { findOverlap, type Op, type Tracker, track } from "../chord/index.ts";
import type { JsonValue, Path } from "../chord/types.ts";
import { utf8ByteLength, utf8HeadIndex } from "../retention/utf8.ts";
import {
  assertImage,
  assertToolNames,
  assertUsage,
  detailsSizeError,
  MAX_NOTICE_BYTES,
  OutputLimitError,
} from "./limits.ts";
import { messageOf } from "./message-of.ts";
import { assertOutputState, cloneOutputState, emptyOutputState } from "./state.ts";
import { SyncedTruncation } from "./synced-truncation.ts";
import {
  DEFAULT_OUTPUT_POLICY,
  type ImageContent,
  type OutputPolicy,
  type ShellOutputMetadata,
  type TextContent,
  type ToolOutput,
  type ToolOutputState,
  type Truncation,
  type Usage,
} from "./types.ts";
import { TextWindow } from "./window.ts";

/** Options for `ToolOutputSink`. */
interface ToolOutputSinkOptions {
  /** How the text is bounded; defaults to tail, 50 KiB, 2000 lines. */
  policy?: OutputPolicy;
  /** Called after every change (and when `details` is handed out), e.g. to schedule a publication. */
  onChange?: () => void;
}

/** Cuts a notice to `MAX_NOTICE_BYTES` so an error can never flood the output. */
function boundNotice(text: string): string {
  if (utf8ByteLength(text) <= MAX_NOTICE_BYTES) return text;
  return `${text.slice(0, utf8HeadIndex(text, MAX_NOTICE_BYTES - 3))}…`;
}

/** Where the text block's string lives in the state. */
const TEXT_PATH: Path = ["content", 0, "text"];

/**
 * The sink one invocation's tool writes to, and the Durable Object reads from.
 *
 * Tool side (`ToolOutput`): `write`, `replace`, `slide`, `capture`, `image`, `details`,
 * `usage`, `addTools`, `terminate`. Host side: `flush()` (ops since the last flush, the
 * first a base), `rebase()`, `snapshot()`, `seed(state)`, `fail(error)`,
 * `appendNotice(text)`, `limitError`.
 *
 * Two ways text is bounded: until `capture`, by the sink's own `TextWindow` (its totals are
 * the truncation); from `capture` on, by the source that reports the totals (a sandbox's
 * tail window): `write`, `slide` and `replace` then apply exactly what the source sent,
 * and a change that would leave more UTF-16 units than the policy's `maxBytes` (so surely
 * more bytes) is refused as the source breaking its window.
 *
 * @example
 * const sink = new ToolOutputSink({ policy: { retain: "tail", maxBytes: 51200, maxLines: 2000 } });
 * sink.flush();              // [["r", { content: [{ type: "text", text: "" }], ... }]]
 * sink.write("hello\n");
 * sink.details.exitCode = 0; // when details is an object
 * sink.flush();              // [["a", ["content", 0, "text"], "hello\n"], ["s", ["details", "exitCode"], 0], ...]
 */
export class ToolOutputSink<D extends JsonValue = JsonValue> implements ToolOutput<D> {
  readonly policy: Readonly<OutputPolicy>;
  /** The tool-facing face of this sink: only the `ToolOutput` methods. */
  readonly output: ToolOutput<D>;
  /** Called after every change; may be replaced. */
  onChange: (() => void) | null;

  readonly #tracker: Tracker<ToolOutputState>;
  /** The sink's own bounds; unused while a source owns the text (`#captured`). */
  #window: TextWindow;
  /** A source owns the text's bounds and the truncation (since `capture`), not the window. */
  #captured = false;
  #spillPath: string | undefined;
  /** The truncation in the tracked state is behind the window's. */
  #truncationBehind = false;
  /**
   * The truncation last written into the tracked state (compared without reading it back);
   * after `capture`, the source's.
   */
  readonly #synced: SyncedTruncation;
  /** Length of the tracked text in UTF-16 units, kept so a source's change is checked without reading it. */
  #textLength = 0;
  /** `details` as accepted by the last size check. */
  #acceptedDetails = "{}";
  /**
   * `details` was handed out (or replaced) since the last seed: only then can it have
   * grown, so only then does a flush pay for measuring it.
   */
  #detailsReachable = false;
  #detailsError: OutputLimitError | null = null;
  #closedBy: string | null = null;

  constructor(options: ToolOutputSinkOptions = {}) {
    this.#window = new TextWindow(options.policy ?? DEFAULT_OUTPUT_POLICY);
    this.policy = this.#window.policy;
    this.onChange = options.onChange ?? null;
    const truncation = this.#window.truncation();
    this.#synced = new SyncedTruncation(truncation);
    this.#tracker = track<ToolOutputState>(emptyOutputState(truncation));
    this.output = this.#facade();
  }

  // ── tool side ──────────────────────────────────────────────────────────────

  /**
   * Appends to the text block, bounded by the policy (or, after `capture`, as the source
   * sent it).
   * @example out.write("line\n")
   */
  write(text: string): void {
    this.#assertOpen();
    if (typeof text !== "string") throw new TypeError("write() takes a string.");
    if (text === "") return;
    if (this.#captured) {
      this.#mirror(0, text);
      return;
    }
    const change = this.#window.append(text);
    this.#edit(change.drop, change.append);
  }

  /**
   * Replaces the retained text (the window and its totals start over from `text`). When the
   * new text continues a suffix of the old one, the flush is still `t` + `a`.
   * @example out.replace("progress: 40%")
   */
  replace(text: string): void {
    this.#assertOpen();
    if (typeof text !== "string") throw new TypeError("replace() takes a string.");
    let next = text;
    if (this.#captured) this.#assertSourceBound(text.length);
    else next = this.#window.replace(text).append;
    const current = this.#text();
    if (next.length >= current.length && next.startsWith(current)) {
      this.#edit(0, next.slice(current.length));
      return;
    }
    const overlap = findOverlap(current, next);
    if (overlap > 0) {
      this.#edit(current.length - overlap, next.slice(overlap));
      return;
    }
    // No known relation to the old text: the tracker compares (usually one `s`).
    (this.#tracker.state.content[0] as TextContent).text = next;
    this.#textLength = next.length;
    this.#truncationBehind = true;
    this.#changed();
  }

  /**
   * Drops `drop` UTF-16 units from the start of the retained text, then appends `text`:
   * the shape of a source-windowed update (a sandbox's `slide`). Throws a `RangeError`
   * and changes nothing if `drop` is out of range (or, under the sink's own window,
   * splits a surrogate pair).
   * @example out.slide(6, "next line\n")
   */
  slide(drop: number, text: string): void {
    this.#assertOpen();
    if (typeof text !== "string") throw new TypeError("slide() takes a drop count and a string.");
    if (this.#captured) {
      this.#mirror(drop, text);
      return;
    }
    const change = this.#window.slide(drop, text);
    this.#edit(change.drop, change.append);
  }

  /**
   * Adopts a source's truncation (totals, flags, spill path) verbatim; it stays until the
   * next `capture`. From then on the source owns the text's bounds: `write`, `slide` and
   * `replace` apply what it sent without a second window.
   * @example out.capture(update.metadata)
   */
  capture(meta: ShellOutputMetadata): void {
    this.#assertOpen();
    // Checks only the fields that moved since the last write (decision 016); throws first.
    if (this.#synced.stage(meta, "capture(meta)") > 0) {
      this.#synced.commit(this.#tracker);
    }
    this.#captured = true;
    this.#spillPath = this.#synced.spillPath;
    this.#truncationBehind = false;
    this.#changed();
  }

  /**
   * Appends an image after the text (never windowed): at most 8, each at most 1 MiB of
   * base64, `mimeType` `image/*`.
   * @example out.image({ data: pngBase64, mimeType: "image/png" })
   */
  image(img: { data: string; mimeType: string }): void {
    this.#assertOpen();
    const content = this.#tracker.state.content;
    assertImage(img, content.length - 1);
    const block: ImageContent = { type: "image", data: img.data, mimeType: img.mimeType };
    content.push(block);
    this.#changed();
  }

  /**
   * The tracked `details` (starts as `{}`): mutate it directly. Its size (at most 64 KiB
   * serialized) is checked at every `flush()` and `snapshot()`.
   */
  get details(): D {
    this.#detailsReachable = true;
    const d = this.#tracker.state.details as D;
    this.onChange?.();
    return d;
  }

  /**
   * Adds `u` field by field to the usage so far.
   * @example out.usage({ input: 120, output: 40 })
   */
  usage(u: Usage): void {
    this.#assertOpen();
    assertUsage(u);
    const state = this.#tracker.state;
    if (state.usage === undefined) state.usage = {};
    const usage = state.usage;
    for (const [field, value] of Object.entries(u)) {
      if (value !== undefined) usage[field] = (usage[field] ?? 0) + value;
    }
    this.#changed();
  }

  /**
   * Replaces the list of tools this call adds.
   * @example out.addTools(["deploy"])
   */
  addTools(names: string[]): void {
    this.#assertOpen();
    assertToolNames(names);
    this.#tracker.state.addedTools = [...names];
    this.#changed();
  }

  /**
   * Replaces the terminate flag.
   * @example out.terminate(true)
   */
  terminate(value: boolean): void {
    this.#assertOpen();
    if (typeof value !== "boolean") throw new TypeError("terminate() takes a boolean.");
    this.#tracker.state.terminate = value;
    this.#changed();
  }

  // ── host side ──────────────────────────────────────────────────────────────

  /** Replaces `details` wholesale (the producer API's `details` ops, applied by the host). */
  replaceDetails(value: JsonValue): void {
    this.#detailsReachable = true;
    this.#tracker.state.details = value;
    this.#changed();
  }

  /**
   * Records a failure: the error's message is appended to what was written (the partial
   * output survives), outside the window's caps, and the tool side is closed.
   * @example sink.fail(new Error("exit code 2"))
   */
  fail(error: unknown): void {
    this.#closedBy ??= "the call failed";
    this.appendNotice(messageOf(error) || "The tool failed.");
  }

  /**
   * Appends a notice (cancelled, interrupted) on its own line, outside the window's caps so
   * it is never cut away, at most 4 KiB; closes the tool side.
   * @example sink.appendNotice("[Cancelled.]")
   */
  appendNotice(text: string): void {
    const current = this.#text();
    const sep = current === "" || current.endsWith("\n") ? "" : "\n";
    this.#closedBy ??= "the call has ended";
    this.#edit(0, sep + boundNotice(String(text)));
  }

  /**
   * The ops since the last flush (the first flush, and the first after `rebase()` or
   * `seed()`, is a base batch). Returns `[]` when nothing changed. A text change is the
   * exact `t` / `a` the sink knew (never a whole-string set for a sliding window).
   */
  flush(): Op[] {
    this.#sync();
    return this.#tracker.flush();
  }

  /** Makes the next flush a base batch. */
  rebase(): void {
    this.#tracker.rebase();
  }

  /** A deep copy of the current state (what a new consumer starts from). */
  snapshot(): ToolOutputState {
    this.#sync();
    return cloneOutputState(this.#tracker.state);
  }

  /** The current truncation (the source's after `capture`, else the window's). */
  truncation(): Truncation {
    if (this.#captured) return this.#synced.toTruncation();
    const t = this.#window.truncation();
    if (this.#spillPath !== undefined) t.spillPath = this.#spillPath;
    return t;
  }

  /**
   * The bound the tool broke by growing `details` past 64 KiB (details were rolled back to
   * the last accepted value), or null. The host fails the call with it.
   */
  get limitError(): OutputLimitError | null {
    return this.#detailsError;
  }

  /**
   * Starts from a durable `state` (after a restart): totals continue from its truncation,
   * the next flush is a base, and the tool side is open again. Throws and changes nothing
   * if `state` is malformed or over a bound.
   */
  seed(state: ToolOutputState): void {
    assertOutputState(state);
    const copy = cloneOutputState(state);
    const window = new TextWindow(this.policy);
    const text = (copy.content[0] as TextContent).text;
    window.resume(text, copy.truncation);
    this.#tracker.state = copy;
    this.#textLength = text.length;
    this.#synced.reset(copy.truncation);
    this.#window = window;
    this.#captured = false;
    this.#spillPath = copy.truncation.spillPath;
    this.#truncationBehind = false;
    this.#acceptedDetails = JSON.stringify(copy.details);
    this.#detailsReachable = false;
    this.#detailsError = null;
    this.#closedBy = null;
    this.#changed();
  }

  // ── internals ──────────────────────────────────────────────────────────────

  #facade(): ToolOutput<D> {
    const sink = this;
    return {
      write: (text) => sink.write(text),
      image: (img) => sink.image(img),
      replace: (text) => sink.replace(text),
      slide: (drop, text) => sink.slide(drop, text),
      capture: (meta) => sink.capture(meta),
      get details() {
        return sink.details;
      },
      usage: (u) => sink.usage(u),
      addTools: (names) => sink.addTools(names),
      terminate: (value) => sink.terminate(value),
    };
  }

  #assertOpen(): void {
    if (this.#detailsError) throw this.#detailsError;
    if (this.#closedBy !== null) {
      throw new Error(
        `This tool's output is closed (${this.#closedBy}); nothing more can be written.`,
      );
    }
  }

  #text(): string {
    return (this.#tracker.state.content[0] as TextContent).text;
  }

  /** A source-bounded change, as sent: checked against the policy, never re-cut. */
  #mirror(drop: number, text: string): void {
    const length = this.#textLength;
    if (!Number.isSafeInteger(drop) || drop < 0 || drop > length) {
      throw new RangeError(
        `slide drop must be an integer from 0 to the retained length ${length}, got ${String(drop)}.`,
      );
    }
    this.#assertSourceBound(length - drop + text.length);
    this.#edit(drop, text);
  }

  /**
   * A source-bounded text of `units` UTF-16 units fits the policy's byte cap only if
   * `units <= maxBytes` (every unit is at least one UTF-8 byte): a cheap guard that needs
   * no look at the text.
   */
  #assertSourceBound(units: number): void {
    const { maxBytes } = this.policy;
    if (units <= maxBytes) return;
    throw new OutputLimitError(
      `The source's text would be ${units} UTF-16 units, more than this tool's ${maxBytes}-byte cap; the source must window its output (nothing was changed).`,
      maxBytes,
      units,
    );
  }

  /** `text = text.slice(drop) + append` in the tracked state, as a known edit. */
  #edit(drop: number, append: string): void {
    if (drop !== 0 || append !== "") {
      this.#tracker.editText(TEXT_PATH, drop, append);
      this.#textLength += append.length - drop;
    }
    if (!this.#captured) this.#truncationBehind = true;
    this.#changed();
  }

  #changed(): void {
    this.onChange?.();
  }

  /** Brings the tracked truncation up to date (once per flush or snapshot), then checks `details`. */
  #sync(): void {
    if (this.#truncationBehind && !this.#captured) {
      if (this.#synced.stage(this.truncation(), "the window's truncation") > 0) {
        this.#synced.commit(this.#tracker);
      }
    }
    this.#truncationBehind = false;
    this.#checkDetails();
  }

  /** Rolls `details` back to the last accepted value when it grew past the bound. */
  #checkDetails(): void {
    if (!this.#detailsReachable || !this.#tracker.dirty) return;
    const json = JSON.stringify(this.#tracker.state.details) ?? "null";
    if (json === this.#acceptedDetails) return;
    const error = detailsSizeError(
      json,
      "It was rolled back to its last accepted value; keep large data in the text or a file.",
    );
    if (error === null) {
      this.#acceptedDetails = json;
      return;
    }
    this.#tracker.state.details = JSON.parse(this.#acceptedDetails) as JsonValue;
    this.#detailsError ??= error;
  }
}
