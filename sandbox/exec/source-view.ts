import { type OutputPolicy, TextWindow, type Truncation } from "../../src/output/index.ts";
import { TextBacklog } from "./text-backlog.ts";

/**
 * The position of a view's text in the stream of everything ever appended to it:
 * the text covers UTF-16 units `[dropped, appended)`. Consumers compare their last
 * published position with the current one to derive `append` / `slide` updates.
 */
export interface ViewPosition {
  dropped: number;
  appended: number;
}

/**
 * A command's bounded view: a `TextWindow` plus, once the window is past its cap, a
 * `TextBacklog` that holds new text until someone reads the view. Reading (`text`,
 * `position`, `truncation`) gives exactly what a window fed every append would give.
 * @example
 * const view = new SourceView({ retain: "tail", maxBytes: 51200, maxLines: 2000 });
 * view.append("hello\n");
 * view.text; // "hello\n"
 */
export class SourceView {
  private readonly policy: OutputPolicy;
  private readonly window: TextWindow;
  private readonly at: ViewPosition = { dropped: 0, appended: 0 };
  private backlog: TextBacklog | null = null;

  constructor(policy: OutputPolicy) {
    this.policy = policy;
    this.window = new TextWindow(policy);
  }

  /** Adds text (already decoded). */
  append(text: string): void {
    if (text === "") return;
    if (this.backlog) {
      this.backlog.push(text);
      return;
    }
    this.feed(text);
    if (this.window.truncation().truncated) {
      // A full head window only counts from now on, but must see the last character
      // to know whether the last line is complete; a tail window needs at most a
      // suffix longer than maxBytes (each UTF-16 unit is at least one byte).
      const keep = this.policy.retain === "head" ? 1 : this.policy.maxBytes + 1;
      this.backlog = new TextBacklog(keep);
    }
  }

  /** True once the cap has been exceeded. */
  get truncated(): boolean {
    return this.backlog !== null;
  }

  /** The retained text. */
  get text(): string {
    this.sync();
    return this.window.text;
  }

  /** Where the retained text sits in everything appended to the window. */
  get position(): ViewPosition {
    this.sync();
    return { ...this.at };
  }

  /** Exact totals of everything appended, and measures of the retained text. */
  truncation(): Truncation {
    this.sync();
    const t = this.window.truncation();
    if (this.backlog) {
      t.totalBytes += this.backlog.skippedBytes;
      t.totalLines += this.backlog.skippedNewlines;
    }
    return t;
  }

  private feed(text: string): void {
    const change = this.window.append(text);
    this.at.dropped += change.drop;
    this.at.appended += change.append.length;
  }

  private sync(): void {
    if (this.backlog?.pending) this.feed(this.backlog.take());
  }
}
