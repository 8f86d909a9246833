import { type AnsiLine, type AnsiStyle, parseAnsi } from "../ansi.ts";
import { el } from "./dom.ts";

/** Within this many pixels of the bottom counts as "at the tail". */
const TAIL_SLACK_PX = 8;

/**
 * The monospace output pane: ANSI lines as text nodes, following the tail until the
 * reader scrolls up, resuming from the "follow" button. Lines unchanged since the
 * last render keep their DOM nodes, so a sliding window re-uses almost everything.
 */
export class OutputPane {
  #text: string | null = null;
  #lines = new Map<string, HTMLElement[]>();
  #following = true;
  readonly #pane: HTMLElement;
  readonly #followButton: HTMLButtonElement;

  constructor(pane: HTMLElement, followButton: HTMLButtonElement) {
    this.#pane = pane;
    this.#followButton = followButton;
    let lastTop = 0;
    // Only the reader stops following: scrolling up (or a wheel turn upwards). A pane
    // that shrinks or a window that slides moves nothing the reader chose.
    pane.addEventListener("scroll", () => {
      if (this.#atTail()) this.#setFollowing(true);
      else if (pane.scrollTop < lastTop - 1) this.#setFollowing(false);
      lastTop = pane.scrollTop;
    });
    pane.addEventListener("wheel", (event) => {
      if (event.deltaY < 0) this.#setFollowing(false);
    });
    followButton.addEventListener("click", () => {
      this.#setFollowing(true);
      this.#scrollToTail();
    });
    new ResizeObserver(() => {
      if (this.#following) this.#scrollToTail();
    }).observe(pane);
  }

  render(text: string): void {
    if (text === this.#text) return;
    this.#text = text;
    const parsed = parseAnsi(text);
    if (parsed.length > 1 && parsed[parsed.length - 1]?.length === 0) parsed.pop();
    const reusable = this.#lines;
    const next = new Map<string, HTMLElement[]>();
    const nodes = parsed.map((line) => {
      const key = lineKey(line);
      const node = reusable.get(key)?.pop() ?? lineNode(line);
      const same = next.get(key);
      if (same) same.push(node);
      else next.set(key, [node]);
      return node;
    });
    this.#lines = next;
    this.#pane.replaceChildren(...nodes);
    if (this.#following) this.#scrollToTail();
  }

  #atTail(): boolean {
    const p = this.#pane;
    return p.scrollHeight - p.scrollTop - p.clientHeight <= TAIL_SLACK_PX;
  }

  #scrollToTail(): void {
    this.#pane.scrollTop = this.#pane.scrollHeight;
  }

  #setFollowing(following: boolean): void {
    this.#following = following;
    this.#followButton.hidden = following;
  }
}

function styleClass(style: AnsiStyle): string {
  const classes: string[] = [];
  if (style.fg !== null) classes.push(`fg${style.fg}`);
  if (style.bg !== null) classes.push(`bg${style.bg}`);
  if (style.bold) classes.push("b");
  return classes.join(" ");
}

function lineKey(line: AnsiLine): string {
  return line.map((span) => `${styleClass(span.style)}\u0001${span.text}`).join("\u0002");
}

function lineNode(line: AnsiLine): HTMLElement {
  const node = el("div", "line");
  for (const span of line) {
    const cls = styleClass(span.style);
    node.append(cls ? el("span", cls, span.text) : document.createTextNode(span.text));
  }
  return node;
}
