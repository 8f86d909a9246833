/**
 * HTML to readable text, streamed through `HTMLRewriter`: scripts, styles and other
 * non-content elements are dropped, block elements become line breaks, headings and
 * list items get Markdown-like markers, links keep their target as `[text](url)`,
 * entities are decoded and whitespace collapses the way a browser renders it (except
 * inside `<pre>`). Text is handed to `emit` in document order as the page streams in.
 */

const SKIPPED = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "math",
  "iframe",
  "object",
]);
const BLOCKS = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "dd",
  "details",
  "dialog",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "header",
  "main",
  "nav",
  "ol",
  "p",
  "section",
  "summary",
  "table",
  "tbody",
  "thead",
  "tfoot",
  "title",
  "tr",
  "ul",
  "caption",
]);
/** Blocks set off by a blank line rather than a single line break. */
const PARAGRAPHS = new Set(["p", "blockquote", "table", "title"]);
const HEADINGS: Record<string, string> = {
  h1: "# ",
  h2: "## ",
  h3: "### ",
  h4: "#### ",
  h5: "##### ",
  h6: "###### ",
};

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  trade: "™",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  laquo: "«",
  raquo: "»",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  bull: "•",
  middot: "·",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
  deg: "°",
  times: "×",
  divide: "÷",
  shy: "",
};

/**
 * Decodes character references; unknown names stay as written.
 * @example decodeEntities("a &amp; b &#x263A;") // "a & b ☺"
 */
export function decodeEntities(text: string): string {
  return text.replace(
    /&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[A-Za-z][A-Za-z0-9]{1,31});?/g,
    (whole, ref: string) => {
      if (ref.startsWith("#")) {
        const code =
          ref[1] === "x" || ref[1] === "X"
            ? parseInt(ref.slice(2), 16)
            : parseInt(ref.slice(1), 10);
        return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
          ? String.fromCodePoint(code)
          : "\ufffd";
      }
      return NAMED[ref] ?? whole;
    },
  );
}

/** A trailing `&...` that may be an entity cut by a chunk boundary. */
const PARTIAL_ENTITY = /&#?[A-Za-z0-9]{0,31}$/;

/** Turns one HTML document into text; attach it to a rewriter, stream the page, then `finish`. */
export class HtmlTextExtractor {
  readonly #base: URL;
  readonly #emit: (text: string) => void;
  #skipDepth = 0;
  #preDepth = 0;
  #pendingBreaks = 0;
  #pendingSpace = false;
  #atStart = true;
  #heldEntity = "";

  /**
   * @param base the page's URL, to make link targets absolute
   * @param emit receives text pieces in document order
   */
  constructor(base: URL, emit: (text: string) => void) {
    this.#base = base;
    this.#emit = emit;
  }

  /**
   * Registers the extractor's handlers on `rewriter`.
   * @example extractor.attach(new HTMLRewriter()).transform(response)
   */
  attach(rewriter: HTMLRewriter): HTMLRewriter {
    return rewriter
      .on("*", { element: (el) => this.#element(el) })
      .onDocument({ text: (chunk) => this.#text(chunk.text, chunk.lastInTextNode) });
  }

  /** Emits what is still held back (a trailing partial entity). */
  finish(): void {
    if (this.#heldEntity !== "") this.#inline(decodeEntities(this.#heldEntity));
    this.#heldEntity = "";
  }

  #element(el: Element): void {
    const tag = el.tagName.toLowerCase();
    if (SKIPPED.has(tag)) {
      this.#skipDepth++;
      el.onEndTag(() => {
        this.#skipDepth--;
      });
      return;
    }
    if (this.#skipDepth > 0) return;
    if (tag === "br") {
      this.#breakLine(1);
      return;
    }
    if (tag === "hr") {
      this.#breakLine(2);
      this.#raw("---");
      this.#breakLine(2);
      return;
    }
    if (tag === "img") {
      const alt = el.getAttribute("alt")?.trim();
      if (alt) this.#raw(`[image: ${alt}]`);
      return;
    }
    const heading = HEADINGS[tag];
    if (heading !== undefined) {
      this.#breakLine(2);
      this.#raw(heading);
      el.onEndTag(() => this.#breakLine(2));
    } else if (tag === "li") {
      this.#breakLine(1);
      this.#raw("- ");
      el.onEndTag(() => this.#breakLine(1));
    } else if (tag === "pre") {
      this.#breakLine(2);
      this.#preDepth++;
      el.onEndTag(() => {
        this.#preDepth--;
        this.#breakLine(2);
      });
    } else if (tag === "td" || tag === "th") {
      this.#raw(" | ");
    } else if (tag === "a") {
      this.#link(el);
    } else if (BLOCKS.has(tag)) {
      const breaks = PARAGRAPHS.has(tag) ? 2 : 1;
      this.#breakLine(breaks);
      el.onEndTag(() => this.#breakLine(breaks));
    }
  }

  #link(el: Element): void {
    const href = el.getAttribute("href")?.trim();
    if (!href || href.startsWith("#") || /^javascript:/i.test(href)) return;
    let target: string;
    try {
      target = new URL(decodeEntities(href), this.#base).href;
    } catch {
      return;
    }
    this.#raw("[");
    el.onEndTag(() => this.#raw(`](${target})`));
  }

  #text(chunk: string, last: boolean): void {
    if (this.#skipDepth > 0) return;
    let text = this.#heldEntity + chunk;
    this.#heldEntity = "";
    if (!last) {
      const partial = PARTIAL_ENTITY.exec(text);
      if (partial !== null) {
        this.#heldEntity = partial[0];
        text = text.slice(0, partial.index);
      }
    }
    if (text !== "") this.#inline(decodeEntities(text));
  }

  #inline(text: string): void {
    if (this.#preDepth > 0) {
      this.#raw(text);
      return;
    }
    const collapsed = text.replace(/[ \t\n\r\f]+/g, " ");
    // Only collapsed spaces are trimmed: `trim()` would also eat non-breaking spaces.
    const core = collapsed.replace(/^ +| +$/g, "");
    if (collapsed.startsWith(" ")) this.#pendingSpace = true;
    if (core !== "") {
      this.#raw(core);
      if (collapsed.endsWith(" ")) this.#pendingSpace = true;
    }
  }

  /** Writes `text` after any pending line breaks or space. */
  #raw(text: string): void {
    if (!this.#atStart) {
      if (this.#pendingBreaks > 0) this.#emit("\n".repeat(this.#pendingBreaks));
      else if (this.#pendingSpace && !text.startsWith("]")) this.#emit(" ");
    }
    this.#pendingBreaks = 0;
    this.#pendingSpace = false;
    this.#atStart = false;
    this.#emit(text);
  }

  #breakLine(n: number): void {
    this.#pendingBreaks = Math.max(this.#pendingBreaks, n);
    this.#pendingSpace = false;
  }
}
