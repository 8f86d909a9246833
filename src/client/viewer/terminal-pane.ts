/**
 * A tty call shown as the terminal it is (decision 191): xterm.js draws the same screen
 * the model reads, follows it live (terminal-feed.ts) and, for a person holding the
 * call's attach token, sends what they type to the same terminal `write_stdin` types
 * into. The viewer and the run page both use it. A watching page draws at the call's size,
 * or the size a person holds it at (`details.terminalSize`); the page that holds the
 * keyboard gives the terminal its window's size and the call's own back when the person
 * lets go (held-size.ts, decision 193).
 */
import { Terminal } from "@xterm/xterm";
import type { ToolOutputState } from "../../core/output/types.ts";
import {
  heldSizeOf,
  type TerminalPaint,
  type TerminalSize,
  TTY_DEFAULT_SIZE,
  type TypedInput,
  typistWords,
} from "../../protocol/index.ts";
import { formatElapsed } from "../elapsed.ts";
import { ToolwireError } from "../errors.ts";
import type { TerminalClient } from "../terminal-client.ts";
import { TerminalFeed } from "../terminal-feed.ts";
import { el } from "./dom.ts";
import { SizeHolder } from "./held-size.ts";

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
  /** The call's own size (its args). */
  readonly #own: TerminalSize;
  /** This page's hold on the terminal's size, when it holds the keyboard. */
  #holder: SizeHolder | null = null;
  #settled = false;

  constructor(client: TerminalClient, size: { cols: number; rows: number }) {
    this.#own = size;
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
        "You hold the keyboard: what you type here goes to the terminal (the model sees that a person typed), at the size of this window.";
      this.#holdKeyboard(client);
      this.#term.onData((data) => {
        if (!this.#holder?.released) void client.type(data);
      });
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

  /** Gives the terminal this window's size while the page holds it, and a "Let go" button. */
  #holdKeyboard(client: TerminalClient): void {
    const screen = this.#term.element?.querySelector(".xterm-screen") as HTMLElement | null;
    this.#holder = new SizeHolder({
      area: this.node,
      cell: () => ({
        width: (screen?.clientWidth ?? 0) / this.#term.cols,
        height: (screen?.clientHeight ?? 0) / this.#term.rows,
      }),
      resize: (size) => client.resize(size),
      restoreOnLeave: () => client.restoreOnLeave(),
      onSize: (size) => this.#term.resize(size.cols, size.rows),
      onRefused: (error) => {
        this.#typing.textContent = `Your size was refused: ${error instanceof Error ? error.message : String(error)}`;
      },
    });
    const letGo = el("button", "terminal-let-go", "Let go");
    letGo.type = "button";
    letGo.title =
      "Give the keyboard back: the call gets its own size again and this page only watches";
    letGo.addEventListener("click", () => {
      letGo.remove();
      this.#term.options.disableStdin = true;
      this.#typing.textContent =
        "You let go: the call has its own size again, and this page only watches.";
      void this.#holder?.letGo().catch(() => {});
    });
    this.#typing.after(letGo);
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
    // The size first, so the bytes drawn at it land on a terminal of that size.
    const holding = this.#holder !== null && !this.#holder.released;
    if (running && !holding) this.#drawAt(heldSizeOf(state.details) ?? this.#own);
    const painted = this.#feed.fed !== null;
    if (running || painted) this.#feed.update(text, total);
    else this.#feed.replay(text, total, { cols: this.#term.cols, rows: this.#term.rows });
    // Once the screen is painted (a paint draws at the size it was taken at).
    if (running && holding && this.#feed.fed !== null) void this.#holder?.fit();
    if (!running && !this.#settled) {
      this.#settled = true;
      this.#holder?.stop();
      this.node.querySelector(".terminal-let-go")?.remove();
      this.#term.options.disableStdin = true;
      this.#term.options.cursorBlink = false;
      this.#typing.textContent = "The command has ended: this is the screen it left.";
    }
  }

  #drawAt(size: TerminalSize): void {
    if (size.cols !== this.#term.cols || size.rows !== this.#term.rows) {
      this.#term.resize(size.cols, size.rows);
    }
  }

  /** Who typed last, from the call's details. */
  showLastInput(input: TypedInput | null, now: number): void {
    this.#note.textContent = input
      ? `Last input: ${typistWords(input)}, ${formatElapsed(Math.max(0, now - input.at))} ago`
      : "";
  }
}
