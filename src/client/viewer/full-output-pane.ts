/**
 * The "view full output" pane: the complete output of a call whose view was cut, read
 * from `GET /v1/invocations/:id/spill` by byte ranges (`SpillReader`). Only the rows on
 * screen are in the DOM and only they are read; a sparse line index built in the
 * background gives line numbers; search finds the next or previous line containing the
 * text anywhere in the file; a line number jumps there. It opens at the file's end, where
 * the viewer's window was, read back from the end at once and numbered once the index
 * is complete. A file of gigabytes never enters the page: the reader keeps at most
 * 4 MiB of it.
 *
 * Scrolling is virtual: a spacer gives the scroll bar the file's height (capped, beyond
 * which a pixel stands for more than one line) and the rows stay in view (sticky).
 */

import { formatCount } from "../../core/output/footer.ts";
import { parseAnsi } from "../ansi.ts";
import { SpillReader, SpillUnavailableError } from "../full-output/spill-reader.ts";
import { formatBytes } from "../truncation-notice.ts";
import { byId, el } from "./dom.ts";

/** Height of one row in pixels (CSS: #full-rows .row). */
const ROW_PX = 18;
/** Tallest spacer; browsers stop scrolling correctly somewhere above 16M px. */
const MAX_SCROLL_PX = 8_000_000;
/** Characters of a row shown; the rest of a long line is in the download. */
const MAX_ROW_CHARS = 2000;

export class FullOutputPane {
  readonly #root = byId("full");
  readonly #info = byId("full-info");
  readonly #scroller = byId("full-scroll");
  readonly #rows = byId("full-rows");
  readonly #spacer = byId("full-spacer");
  readonly #query = byId<HTMLInputElement>("full-query");
  /** Where the reader is: the one position status, for searches and jumps alike. */
  readonly #status = byId("full-status");
  /** The matching-line count of the last query (counted once per query). */
  #counted: { reader: SpillReader; query: string; lines: Promise<number> } | null = null;
  /** The text of the current match, highlighted in its row; null after a jump. */
  #highlight: string | null = null;
  readonly #lineInput = byId<HTMLInputElement>("full-line");
  readonly #download = byId<HTMLAnchorElement>("full-download");
  readonly #url: string;
  #reader: SpillReader | null = null;
  #abort: AbortController | null = null;
  /** First line on screen (1-based). */
  #top = 1;
  /** Showing the file's end, as opened, until the person moves or the index completes. */
  #atTail = false;
  /** The line of the current match or jump, highlighted. */
  #current: number | null = null;
  #renderSeq = 0;
  #ignoreScroll = false;
  /** What had focus before the pane opened: it gets focus back on close. */
  #opener: HTMLElement | null = null;

  /**
   * @example new FullOutputPane(`/v1/invocations/${id}/spill?token=${token}`)
   */
  constructor(url: string) {
    this.#url = url;
    this.#download.href = `${url}${url.includes("?") ? "&" : "?"}download=1`;
    byId("full-close").addEventListener("click", () => this.close());
    byId("full-next").addEventListener("click", () => void this.find("next"));
    byId("full-prev").addEventListener("click", () => void this.find("previous"));
    this.#query.addEventListener("keydown", (event) => {
      if (event.key === "Enter") void this.find(event.shiftKey ? "previous" : "next");
    });
    byId("full-go").addEventListener("click", () => void this.#goToTypedLine());
    this.#lineInput.addEventListener("keydown", (event) => {
      if (event.key === "Enter") void this.#goToTypedLine();
    });
    this.#scroller.addEventListener("scroll", () => {
      if (this.#ignoreScroll) {
        this.#ignoreScroll = false;
        return;
      }
      this.#atTail = false;
      this.#top = this.#lineAtScroll();
      this.#queueRender();
    });
    new ResizeObserver(() => {
      if (this.#reader) this.#layout();
    }).observe(this.#scroller);
    this.#root.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        this.close();
      } else if (event.key === "Tab") this.#keepFocusInside(event);
    });
  }

  /** Opens the pane and starts reading the file (again, if it was open before). */
  async open(): Promise<void> {
    this.#abort?.abort();
    const abort = new AbortController();
    this.#abort = abort;
    if (this.#root.hidden) {
      this.#opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    }
    this.#root.hidden = false;
    // The pane is modal: the page behind it can be neither focused nor clicked.
    this.#setBackgroundInert(true);
    this.#query.focus();
    document.body.dataset.full = "loading";
    this.#rows.replaceChildren();
    this.#info.textContent = "Loading the full output…";
    const reader = new SpillReader(this.#url);
    try {
      await reader.open();
    } catch (error) {
      this.#unavailable(error);
      return;
    }
    this.#reader = reader;
    this.#top = 1;
    this.#current = null;
    this.#atTail = true;
    this.#status.textContent = "";
    this.#layout();
    await this.#render();
    reader
      .indexAll(() => {
        this.#describe();
        this.#layout();
      }, abort.signal)
      .then(async () => {
        if (abort.signal.aborted || !reader.index.complete) return;
        // Still at the end as opened: the same rows, now with their numbers.
        if (this.#atTail)
          await this.goTo(Math.max(1, reader.index.lines - this.#visibleRows() + 1), false);
        document.body.dataset.full = "indexed";
      })
      .catch((error: unknown) => this.#unavailable(error));
  }

  close(): void {
    this.#abort?.abort();
    this.#root.hidden = true;
    this.#setBackgroundInert(false);
    delete document.body.dataset.full;
    this.#opener?.focus();
    this.#opener = null;
  }

  /** Tab from the last control goes to the first, Shift+Tab from the first to the last. */
  #keepFocusInside(event: KeyboardEvent): void {
    const controls = [
      ...this.#root.querySelectorAll<HTMLElement>("input, button, a[href], [tabindex]"),
    ].filter((control) => !control.hidden && control.tabIndex >= 0);
    const first = controls[0];
    const last = controls.at(-1);
    if (!first || !last) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  #setBackgroundInert(inert: boolean): void {
    for (const element of document.body.children) {
      if (element !== this.#root && element instanceof HTMLElement) element.inert = inert;
    }
  }

  /** Moves to the next or previous line containing the search text. */
  async find(direction: "next" | "previous"): Promise<void> {
    const reader = this.#reader;
    const query = this.#query.value;
    if (!reader || query === "") return;
    // From the end as opened, "next" goes round to the top and "previous" looks back.
    const from =
      this.#current ??
      (this.#atTail ? Number.MAX_SAFE_INTEGER : direction === "next" ? this.#top - 1 : this.#top);
    this.#status.textContent = "Searching…";
    let line: number | null;
    let wrapped = false;
    try {
      line = await reader.search(query, from, direction);
      if (line === null) {
        // Past the last match: go round from the other end, as a find bar does.
        wrapped = true;
        const end = direction === "next" ? 0 : Number.MAX_SAFE_INTEGER;
        line = await reader.search(query, end, direction);
      }
    } catch (error) {
      this.#unavailable(error);
      return;
    }
    if (line === null) {
      this.#status.textContent = `No line contains "${query}".`;
      this.#status.dataset.found = "none";
      return;
    }
    const round = wrapped ? (direction === "next" ? " (from the top)" : " (from the end)") : "";
    this.#highlight = query;
    await this.goTo(line);
    // Said once the line is on screen, so the status never names a line not yet shown.
    this.#status.textContent = `Line ${formatCount(line)}${round}`;
    this.#status.dataset.found = String(line);
    void this.#count(reader, query, this.#status.textContent);
  }

  /** Adds how many lines match to the search status, once counted (once per query). */
  async #count(reader: SpillReader, query: string, shown: string): Promise<void> {
    if (this.#counted?.query !== query || this.#counted.reader !== reader) {
      this.#counted = { reader, query, lines: reader.countMatches(query, this.#abort?.signal) };
    }
    const lines = await this.#counted.lines.catch(() => null);
    // Another search or jump may have moved on meanwhile: leave its status alone.
    if (lines === null || this.#status.textContent !== shown) return;
    this.#status.textContent = `${shown} · ${formatCount(lines)} matching ${lines === 1 ? "line" : "lines"}`;
  }

  /** Shows line `line` near the top of the pane and (unless told not to) highlights it. */
  async goTo(line: number, highlight = true): Promise<void> {
    const reader = this.#reader;
    if (!reader) return;
    this.#atTail = false;
    this.#current = highlight ? line : null;
    this.#top = highlight ? Math.max(1, line - 3) : line;
    this.#scrollToTop();
    await this.#render();
  }

  async #goToTypedLine(): Promise<void> {
    const wanted = Number(this.#lineInput.value);
    if (!Number.isInteger(wanted) || wanted < 1) {
      this.#status.textContent = "Type a line number (1 or more).";
      return;
    }
    const reader = this.#reader;
    if (!reader) return;
    const known = reader.index.lines;
    if (reader.index.complete && wanted > known) {
      this.#status.textContent = `The output has ${formatCount(known)} lines.`;
      return;
    }
    this.#status.textContent = `Line ${formatCount(wanted)}`;
    this.#highlight = null;
    await this.goTo(wanted);
  }

  #visibleRows(): number {
    return Math.max(1, Math.ceil(this.#scroller.clientHeight / ROW_PX));
  }

  /** Lines the scroll bar spans: the index's count, or at least what is on screen. */
  #totalLines(): number {
    return Math.max(this.#reader?.index.lines ?? 1, this.#top + this.#visibleRows() - 1);
  }

  #scrollRange(): number {
    const height = Math.min(this.#totalLines() * ROW_PX, MAX_SCROLL_PX);
    return Math.max(0, height - this.#scroller.clientHeight);
  }

  #layout(): void {
    this.#spacer.style.height = `${this.#scrollRange()}px`;
    this.#scrollToTop();
  }

  #lineAtScroll(): number {
    const range = this.#scrollRange();
    const lastTop = Math.max(1, this.#totalLines() - this.#visibleRows() + 1);
    if (range === 0) return 1;
    return 1 + Math.round((this.#scroller.scrollTop / range) * (lastTop - 1));
  }

  #scrollToTop(): void {
    const range = this.#scrollRange();
    const lastTop = Math.max(1, this.#totalLines() - this.#visibleRows() + 1);
    const target = this.#atTail
      ? range
      : lastTop <= 1
        ? 0
        : Math.round(((this.#top - 1) / (lastTop - 1)) * range);
    if (Math.abs(this.#scroller.scrollTop - target) >= 1) {
      this.#ignoreScroll = true;
      this.#scroller.scrollTop = target;
    }
  }

  #renderQueued = false;
  #queueRender(): void {
    if (this.#renderQueued) return;
    this.#renderQueued = true;
    requestAnimationFrame(() => {
      this.#renderQueued = false;
      void this.#render();
    });
  }

  /** Reads the rows on screen and shows them; a newer render makes an older one moot. */
  async #render(): Promise<void> {
    const reader = this.#reader;
    if (!reader) return;
    const seq = ++this.#renderSeq;
    let lines: { line: number | null; text: string; cut: boolean }[];
    try {
      lines = this.#atTail
        ? (await reader.lastLines(this.#visibleRows())).map((l) => ({ ...l, line: null }))
        : await reader.lines(this.#top, this.#visibleRows());
    } catch (error) {
      this.#unavailable(error);
      return;
    }
    if (seq !== this.#renderSeq) return;
    // A fixed gutter: as wide as the last line number can be (the byte count bounds it
    // until the count is known), so text does not shift as numbers gain a digit.
    const width = String(reader.index.complete ? reader.index.lines : reader.size + 1).length;
    this.#rows.style.setProperty("--gutter", `${width}ch`);
    this.#rows.replaceChildren(
      ...lines.map((line) => {
        const row = el(
          "div",
          line.line !== null && line.line === this.#current ? "row hit" : "row",
        );
        // Rows read back from the end have no number until the index is complete.
        if (line.line !== null) row.dataset.line = String(line.line);
        row.append(el("span", "ln", (line.line === null ? "" : String(line.line)).padStart(width)));
        const text = el("span", "tx");
        const shown =
          line.text.length > MAX_ROW_CHARS ? line.text.slice(0, MAX_ROW_CHARS) : line.text;
        const plain = (parseAnsi(shown)[0] ?? []).map((span) => span.text).join("");
        const at =
          line.line === this.#current && this.#highlight
            ? plain.toLowerCase().indexOf(this.#highlight.toLowerCase())
            : -1;
        if (at < 0 || this.#highlight === null) text.append(document.createTextNode(plain));
        else {
          const end = at + this.#highlight.length;
          text.append(
            plain.slice(0, at),
            el("mark", undefined, plain.slice(at, end)),
            plain.slice(end),
          );
        }
        if (line.cut || line.text.length > MAX_ROW_CHARS) {
          text.append(el("span", "muted", " … (line cut here; download for all of it)"));
        }
        row.append(text);
        return row;
      }),
    );
    this.#describe();
    if (document.body.dataset.full === "loading") document.body.dataset.full = "open";
  }

  #describe(): void {
    const reader = this.#reader;
    if (!reader) return;
    const index = reader.index;
    const lines = `${formatCount(index.lines)} lines`;
    const size = formatBytes(reader.size);
    this.#info.textContent = index.complete
      ? `${lines}, ${size}`
      : `${size}; counting lines… ${Math.floor((index.scanned / Math.max(1, reader.size)) * 100)}% (${lines} so far)`;
  }

  #unavailable(error: unknown): void {
    if (this.#abort?.signal.aborted) return;
    document.body.dataset.full = "unavailable";
    const message =
      error instanceof SpillUnavailableError
        ? error.message
        : `reading it failed (${error instanceof Error ? error.message : String(error)})`;
    this.#info.textContent = `The full output is not available: ${message}`;
    this.#rows.replaceChildren();
  }
}
