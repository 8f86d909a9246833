/**
 * `ToolOutputSink`: the one `ToolOutput` of an invocation, over one Chord tracker of
 * `ToolOutputState`. Text goes through a `TextWindow` before the tracked state changes,
 * so a sliding window flushes as `t` + `a`. See docs/decisions/021 and 022.
 */
import { findOverlap, type Op, type Tracker, track } from "../chord/index.ts";
import type { JsonValue } from "../chord/types.ts";
import { utf8ByteLength, utf8HeadIndex } from "../retention/utf8.ts";
import {
  assertImage,
  assertToolNames,
  assertTruncation,
  assertUsage,
  copyTruncation,
  detailsSizeError,
  MAX_NOTICE_BYTES,
  type OutputLimitError,
  TRUNCATION_KEYS,
} from "./limits.ts";
import { assertOutputState, cloneOutputState, emptyOutputState } from "./state.ts";
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
export interface ToolOutputSinkOptions {
  /** How the text is bounded; defaults to tail, 50 KiB, 2000 lines. */
  policy?: OutputPolicy;
  /** Called after every change (and when `details` is handed out), e.g. to schedule a publication. */
  onChange?: () => void;
}

/** The text change since the last flush: `current = flushed.slice(drop) + append`. */
interface TextDelta {
  drop: number;
  append: string;
}

function isTextOp(op: Op): boolean {
  if (op[0] !== "s" && op[0] !== "t" && op[0] !== "a") return false;
  const path = op[1];
  return path.length === 3 && path[0] === "content" && path[1] === 0 && path[2] === "text";
}

/** Length of the text after `ops` (the text ops of one flush) apply to a text of `length`. */
function lengthAfter(length: number, ops: readonly Op[]): number {
  for (const op of ops) {
    if (op[0] === "s") length = typeof op[2] === "string" ? op[2].length : -1;
    else if (op[0] === "t") length -= op[2];
    else if (op[0] === "a") length += op[2].length;
  }
  return length;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** Cuts a notice to `MAX_NOTICE_BYTES` so an error can never flood the output. */
function boundNotice(text: string): string {
  if (utf8ByteLength(text) <= MAX_NOTICE_BYTES) return text;
  return `${text.slice(0, utf8HeadIndex(text, MAX_NOTICE_BYTES - 3))}…`;
}

/**
 * The sink one invocation's tool writes to, and the Durable Object reads from.
 *
 * Tool side (`ToolOutput`): `write`, `replace`, `slide`, `capture`, `image`, `details`,
 * `usage`, `addTools`, `terminate`. Host side: `flush()` (ops since the last flush, the
 * first a base), `rebase()`, `snapshot()`, `seed(state)`, `fail(error)`,
 * `appendNotice(text)`, `limitError`.
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

  private readonly tracker: Tracker<ToolOutputState>;
  private window: TextWindow;
  /** Truncation adopted from a source by `capture`, or null when the window owns it. */
  private captured: Truncation | null = null;
  private spillPath: string | undefined;
  /** The text as of the last flush (what the tracker's baseline holds). */
  private flushedText = "";
  /** How the text changed since then, or null when only `replacement` is known. */
  private delta: TextDelta | null = { drop: 0, append: "" };
  private replacement = "";
  /** The text and truncation in the tracked state are behind. */
  private textBehind = false;
  private truncationBehind = false;
  /** `details` as accepted by the last size check. */
  private acceptedDetails = "{}";
  private detailsError: OutputLimitError | null = null;
  private closedBy: string | null = null;

  constructor(options: ToolOutputSinkOptions = {}) {
    this.window = new TextWindow(options.policy ?? DEFAULT_OUTPUT_POLICY);
    this.policy = this.window.policy;
    this.onChange = options.onChange ?? null;
    this.tracker = track<ToolOutputState>(emptyOutputState(this.window.truncation()));
    this.output = this.facade();
  }

  // ── tool side ──────────────────────────────────────────────────────────────

  /**
   * Appends to the text block, bounded by the policy.
   * @example out.write("line\n")
   */
  write(text: string): void {
    this.assertOpen();
    if (typeof text !== "string") throw new TypeError("write() takes a string.");
    if (text === "") return;
    const change = this.window.append(text);
    this.changeText(change.drop, change.append);
  }

  /**
   * Replaces the retained text (the window and its totals start over from `text`). When the
   * new text continues a suffix of the old one, the flush is still `t` + `a`.
   * @example out.replace("progress: 40%")
   */
  replace(text: string): void {
    this.assertOpen();
    if (typeof text !== "string") throw new TypeError("replace() takes a string.");
    const next = this.window.replace(text).append;
    const current = this.currentText();
    if (next.length >= current.length && next.startsWith(current)) {
      this.changeText(0, next.slice(current.length));
      return;
    }
    const overlap = findOverlap(current, next);
    if (overlap > 0) {
      this.changeText(current.length - overlap, next.slice(overlap));
      return;
    }
    this.delta = null;
    this.replacement = next;
    this.textBehind = this.truncationBehind = true;
    this.changed();
  }

  /**
   * Drops `drop` UTF-16 units from the start of the retained text, then appends `text`:
   * the shape of a source-windowed update (a sandbox's `slide`). Throws a `RangeError`
   * and changes nothing if `drop` is out of range or splits a surrogate pair.
   * @example out.slide(6, "next line\n")
   */
  slide(drop: number, text: string): void {
    this.assertOpen();
    if (typeof text !== "string") throw new TypeError("slide() takes a drop count and a string.");
    const change = this.window.slide(drop, text);
    this.changeText(change.drop, change.append);
  }

  /**
   * Adopts a source's truncation (totals, flags, spill path) verbatim; it stays until the
   * next `capture`, while the text keeps following `write`/`slide`/`replace`.
   * @example out.capture(update.metadata)
   */
  capture(meta: ShellOutputMetadata): void {
    this.assertOpen();
    assertTruncation(meta, "capture(meta)");
    this.captured = copyTruncation(meta);
    this.spillPath = meta.spillPath;
    this.truncationBehind = true;
    this.changed();
  }

  /**
   * Appends an image after the text (never windowed): at most 8, each at most 1 MiB of
   * base64, `mimeType` `image/*`.
   * @example out.image({ data: pngBase64, mimeType: "image/png" })
   */
  image(img: { data: string; mimeType: string }): void {
    this.assertOpen();
    const content = this.tracker.state.content;
    assertImage(img, content.length - 1);
    const block: ImageContent = { type: "image", data: img.data, mimeType: img.mimeType };
    content.push(block);
    this.changed();
  }

  /**
   * The tracked `details` (starts as `{}`): mutate it directly. Its size (at most 64 KiB
   * serialized) is checked at every `flush()` and `snapshot()`.
   */
  get details(): D {
    const d = this.tracker.state.details as D;
    this.onChange?.();
    return d;
  }

  /**
   * Adds `u` field by field to the usage so far.
   * @example out.usage({ input: 120, output: 40 })
   */
  usage(u: Usage): void {
    this.assertOpen();
    assertUsage(u);
    const state = this.tracker.state;
    if (state.usage === undefined) state.usage = {};
    const usage = state.usage;
    for (const [field, value] of Object.entries(u)) {
      if (value !== undefined) usage[field] = (usage[field] ?? 0) + value;
    }
    this.changed();
  }

  /**
   * Replaces the list of tools this call adds.
   * @example out.addTools(["deploy"])
   */
  addTools(names: string[]): void {
    this.assertOpen();
    assertToolNames(names);
    this.tracker.state.addedTools = [...names];
    this.changed();
  }

  /**
   * Replaces the terminate flag.
   * @example out.terminate(true)
   */
  terminate(value: boolean): void {
    this.assertOpen();
    if (typeof value !== "boolean") throw new TypeError("terminate() takes a boolean.");
    this.tracker.state.terminate = value;
    this.changed();
  }

  // ── host side ──────────────────────────────────────────────────────────────

  /** Replaces `details` wholesale (the producer API's `details` ops, applied by the host). */
  replaceDetails(value: JsonValue): void {
    this.tracker.state.details = value;
    this.changed();
  }

  /**
   * Records a failure: the error's message is appended to what was written (the partial
   * output survives), outside the window's caps, and the tool side is closed.
   * @example sink.fail(new Error("exit code 2"))
   */
  fail(error: unknown): void {
    this.closedBy ??= "the call failed";
    this.appendNotice(messageOf(error) || "The tool failed.");
  }

  /**
   * Appends a notice (cancelled, interrupted) on its own line, outside the window's caps so
   * it is never cut away, at most 4 KiB; closes the tool side.
   * @example sink.appendNotice("[Cancelled.]")
   */
  appendNotice(text: string): void {
    const current = this.currentText();
    const sep = current === "" || current.endsWith("\n") ? "" : "\n";
    this.closedBy ??= "the call has ended";
    this.changeText(0, sep + boundNotice(String(text)));
  }

  /**
   * The ops since the last flush (the first flush, and the first after `rebase()` or
   * `seed()`, is a base batch). Returns `[]` when nothing changed. A text change is always
   * `t`/`a` when the sink knows it (never a whole-string set for a sliding window).
   */
  flush(): Op[] {
    this.sync();
    const ops = this.tracker.flush();
    const delta = this.delta;
    const flushedLength = this.flushedText.length;
    this.flushedText = this.currentText();
    this.delta = { drop: 0, append: "" };
    if (delta === null) return ops;
    const textOps = ops.filter(isTextOp);
    if (textOps.length === 0) return ops;
    // The tracker's probe may miss the real overlap in periodic text; the sink knows it.
    const expected = flushedLength - delta.drop + delta.append.length;
    if (lengthAfter(flushedLength, textOps) !== expected) return ops;
    const path = ["content", 0, "text"];
    const exact: Op[] = [];
    if (delta.drop > 0) exact.push(["t", path, delta.drop]);
    if (delta.append !== "") exact.push(["a", path.slice(), delta.append]);
    const out = ops.filter((op) => !isTextOp(op));
    out.splice(ops.indexOf(textOps[0] as Op), 0, ...exact);
    return out;
  }

  /** Makes the next flush a base batch. */
  rebase(): void {
    this.tracker.rebase();
  }

  /** A deep copy of the current state (what a new consumer starts from). */
  snapshot(): ToolOutputState {
    this.sync();
    return cloneOutputState(this.tracker.state);
  }

  /** The current truncation (the source's after `capture`, else the window's). */
  truncation(): Truncation {
    if (this.captured) return { ...this.captured };
    const t = this.window.truncation();
    if (this.spillPath !== undefined) t.spillPath = this.spillPath;
    return t;
  }

  /**
   * The bound the tool broke by growing `details` past 64 KiB (details were rolled back to
   * the last accepted value), or null. The host fails the call with it.
   */
  get limitError(): OutputLimitError | null {
    return this.detailsError;
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
    this.tracker.state = copy;
    this.window = window;
    this.captured = null;
    this.spillPath = copy.truncation.spillPath;
    this.flushedText = text;
    this.delta = { drop: 0, append: "" };
    this.replacement = "";
    this.textBehind = this.truncationBehind = false;
    this.acceptedDetails = JSON.stringify(copy.details);
    this.detailsError = null;
    this.closedBy = null;
    this.changed();
  }

  // ── internals ──────────────────────────────────────────────────────────────

  private facade(): ToolOutput<D> {
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

  private assertOpen(): void {
    if (this.detailsError) throw this.detailsError;
    if (this.closedBy !== null) {
      throw new Error(
        `This tool's output is closed (${this.closedBy}); nothing more can be written.`,
      );
    }
  }

  private currentText(): string {
    if (this.delta === null) return this.replacement;
    if (this.delta.drop === 0 && this.delta.append === "") return this.flushedText;
    return this.flushedText.slice(this.delta.drop) + this.delta.append;
  }

  /** Records `current = current.slice(drop) + append` without touching the tracked state yet. */
  private changeText(drop: number, append: string): void {
    if (this.delta === null) {
      this.replacement = this.replacement.slice(drop) + append;
    } else {
      const kept = this.flushedText.length - this.delta.drop;
      if (drop <= kept) this.delta.drop += drop;
      else {
        this.delta.append = this.delta.append.slice(drop - kept);
        this.delta.drop = this.flushedText.length;
      }
      this.delta.append += append;
    }
    this.textBehind = this.truncationBehind = true;
    this.changed();
  }

  private changed(): void {
    this.onChange?.();
  }

  /**
   * Brings the tracked text and truncation up to date (once per flush or snapshot, not per
   * write), then checks the size of `details`.
   */
  private sync(): void {
    const state = this.tracker.state;
    if (this.textBehind) {
      (state.content[0] as TextContent).text = this.currentText();
      this.textBehind = false;
    }
    if (this.truncationBehind) {
      const next = this.truncation();
      const cur = state.truncation;
      for (const key of TRUNCATION_KEYS) {
        if (cur[key] !== next[key]) (cur as unknown as Record<string, unknown>)[key] = next[key];
      }
      this.truncationBehind = false;
    }
    this.checkDetails();
  }

  /** Rolls `details` back to the last accepted value when it grew past the bound. */
  private checkDetails(): void {
    if (!this.tracker.dirty) return;
    const json = JSON.stringify(this.tracker.state.details) ?? "null";
    if (json === this.acceptedDetails) return;
    const error = detailsSizeError(
      json,
      "It was rolled back to its last accepted value; keep large data in the text or a file.",
    );
    if (error === null) {
      this.acceptedDetails = json;
      return;
    }
    this.tracker.state.details = JSON.parse(this.acceptedDetails) as JsonValue;
    this.detailsError ??= error;
  }
}
