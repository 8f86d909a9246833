/**
 * A tty call shown as the terminal it is (decision 191): xterm.js draws the same screen
 * the model reads, follows it live (terminal-feed.ts) and, for a person holding the
 * call's attach token, sends what they type to the same terminal `write_stdin` types
 * into. The viewer and the run page both use it. The terminal keeps the call's size: a
 * page never resizes it (the model's size stays its own; decision 191).
 */
import { Terminal } from "@xterm/xterm";
import type { ToolOutputState } from "../../core/output/types.ts";
import {
  type TerminalPaint,
  TTY_DEFAULT_SIZE,
  type TypedInput,
  typistWords,
} from "../../protocol/index.ts";
import { formatElapsed } from "../elapsed.ts";
import { ToolwireError } from "../errors.ts";
import type { TerminalClient } from "../terminal-client.ts";
import { TerminalFeed } from "../terminal-feed.ts";
import { el } from "./dom.ts";

/** The size a call's args asked for, else the default. */
export function callSize(args: unknown): { cols: number; rows: number } {
  const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  return {
    cols: typeof a.cols === "number" ? a.cols : TTY_DEFAULT_SIZE.cols,
    rows: typeof a.rows === "number" ? a.rows : TTY_DEFAULT_SIZE.rows,
  };
}

export class TerminalPane {
  readonly node: HTMLElement;
  readonly #term: Terminal;
  readonly #feed: TerminalFeed;
  readonly #note: HTMLElement;
  readonly #typing: HTMLElement;
  #settled = false;

  constructor(client: TerminalClient, size: { cols: number; rows: number }) {
    this.node = el("div", "terminal-pane");
    this.#note = el("p", "terminal-note");
    this.#note.setAttribute("aria-live", "polite");
    this.#typing = el("p", "terminal-typing");
    const screen = el("div", "terminal-screen");
    screen.setAttribute("aria-label", "Terminal");
    this.node.append(this.#typing, screen, this.#note);
    this.#term = new Terminal({
      cols: size.cols,
      rows: size.rows,
      scrollback: 1000,
      disableStdin: !client.canType,
      cursorBlink: client.canType,
      convertEol: false,
      fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace',
      fontSize: 13,
      theme: { background: "#0b0e12" },
    });
    this.#term.open(screen);
    this.#feed = new TerminalFeed(
      {
        repaint: (paint: TerminalPaint) => {
          this.#term.reset();
          if (paint.cols !== this.#term.cols || paint.rows !== this.#term.rows) {
            this.#term.resize(paint.cols, paint.rows);
          }
          this.#term.write(paint.data);
        },
        write: (bytes) => this.#term.write(bytes),
      },
      () => client.paint(),
    );
    this.#feed.onPaintFailed = (error) => {
      this.#note.textContent = `The screen could not be read: ${error instanceof Error ? error.message : String(error)}`;
    };
    if (client.canType) {
      this.#typing.textContent =
        "You hold the keyboard: what you type here goes to the terminal (the model sees that a person typed).";
      this.#term.onData((data) => void client.type(data));
      client.onTyped = (answer) => {
        if (answer instanceof ToolwireError) {
          this.#typing.textContent = `Your keys were refused: ${answer.message}`;
          this.#typing.classList.add("refused");
        }
      };
    } else {
      this.#typing.textContent = "Watching (read-only): a link with an attach token can type.";
    }
  }

  /** The terminal's rows as text, top to bottom (what a test compares with the model's screen). */
  rows(): string[] {
    const buffer = this.#term.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this.#term.rows; y++) {
      rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
    }
    return rows;
  }

  focus(): void {
    this.#term.focus();
  }

  /**
   * Follows the call's state (its text without the model's footer): live bytes while it
   * runs and, once it settled, its last ones; a call that settled before this pane
   * painted anything is drawn from its kept window.
   */
  render(state: ToolOutputState, running: boolean, text: string): void {
    const total = state.truncation.totalBytes;
    if (running || this.#feed.fed !== null) this.#feed.update(text, total);
    else this.#feed.replay(text, total, { cols: this.#term.cols, rows: this.#term.rows });
    if (!running && !this.#settled) {
      this.#settled = true;
      this.#term.options.disableStdin = true;
      this.#term.options.cursorBlink = false;
      this.#typing.textContent = "The command has ended: this is the screen it left.";
    }
  }

  /** Who typed last, from the call's details. */
  showLastInput(input: TypedInput | null, now: number): void {
    this.#note.textContent = input
      ? `Last input: ${typistWords(input)}, ${formatElapsed(Math.max(0, now - input.at))} ago`
      : "";
  }
}
