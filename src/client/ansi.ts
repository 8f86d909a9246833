/**
 * ANSI text to styled spans, for showing terminal output safely. Only SGR colours
 * (30–37, 90–97, 40–47, 100–107, 39, 49), bold (1, 22) and reset (0) are kept;
 * every other escape sequence and control character is removed. The result is plain
 * data: a renderer turns it into DOM text nodes, never into HTML.
 */

/** Colour indexes 0–7 are the normal colours, 8–15 the bright ones. */
export interface AnsiStyle {
  fg: number | null;
  bg: number | null;
  bold: boolean;
}
export interface AnsiSpan {
  text: string;
  style: AnsiStyle;
}
/** One output line (without its line break) as styled spans. */
export type AnsiLine = AnsiSpan[];

const PLAIN: AnsiStyle = { fg: null, bg: null, bold: false };

/**
 * Splits `text` into lines of styled spans. A lone carriage return starts the line
 * over (what a terminal shows for progress bars); an escape sequence cut off at the
 * end of `text` is dropped (the next update completes it).
 *
 * @example
 * parseAnsi("\u001b[1;31mfail\u001b[0m ok")
 * // [[{ text: "fail", style: { fg: 1, bg: null, bold: true } }, { text: " ok", style: PLAIN }]]
 */
export function parseAnsi(text: string): AnsiLine[] {
  const lines: AnsiLine[] = [];
  let line: AnsiLine = [];
  let style: AnsiStyle = PLAIN;
  let run = "";

  const endRun = () => {
    if (run === "") return;
    const last = line[line.length - 1];
    if (last && last.style === style) last.text += run;
    else line.push({ text: run, style });
    run = "";
  };

  let i = 0;
  while (i < text.length) {
    const ch = text.charCodeAt(i);
    if (ch === 0x1b || ch === 0x9b) {
      const end = escapeEnd(text, i);
      if (end === -1) break;
      const csi = ch === 0x9b ? 1 : text[i + 1] === "[" ? 2 : 0;
      if (csi > 0 && text[end - 1] === "m") {
        const next = applySgr(style, text.slice(i + csi, end - 1));
        if (next !== style) {
          endRun();
          style = next;
        }
      }
      i = end;
      continue;
    }
    if (ch === 0x0a) {
      endRun();
      lines.push(line);
      line = [];
    } else if (ch === 0x0d) {
      if (text.charCodeAt(i + 1) !== 0x0a) {
        run = "";
        line = [];
      }
    } else if (ch === 0x09 || (ch >= 0x20 && ch !== 0x7f && !(ch >= 0x80 && ch < 0xa0))) {
      run += text[i];
    }
    i++;
  }
  endRun();
  lines.push(line);
  return lines;
}

/**
 * Index just past the escape sequence starting at `i`, or -1 if the text ends inside
 * it (the next update completes it). A byte that cannot continue a sequence ends it
 * and is kept, so a broken sequence never hides the text after it: a lone ESC before
 * such a byte drops only the ESC, a cut-off CSI stops at the newline after it.
 */
function escapeEnd(text: string, i: number): number {
  let j: number;
  if (text.charCodeAt(i) === 0x9b) j = i + 1;
  else {
    const kind = text[i + 1];
    if (kind === undefined) return -1;
    if (kind === "[") j = i + 2;
    else if (kind === "]" || kind === "P" || kind === "X" || kind === "^" || kind === "_") {
      return stringEnd(text, i + 2);
    } else {
      // Other escapes: intermediate bytes (e.g. "(" of a charset choice), then one final byte.
      for (j = i + 1; j < text.length; j++) {
        const c = text.charCodeAt(j);
        if (c >= 0x21 && c <= 0x2f) continue;
        if (c >= 0x30 && c <= 0x7e) return j + 1;
        return j;
      }
      return -1;
    }
  }
  // CSI: parameter and intermediate bytes, then one final byte 0x40–0x7e.
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c >= 0x40 && c <= 0x7e) return j + 1;
    if (c < 0x20 || c > 0x3f) return j;
  }
  return -1;
}

/**
 * OSC/DCS/SOS/PM/APC strings end at BEL or ST (ESC \ or C1 0x9c), which are part of
 * them, or just before a newline or another escape, which are not: a string that was
 * never terminated hides only the rest of its own line.
 */
function stringEnd(text: string, j: number): number {
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x07 || c === 0x9c) return j + 1;
    if (c === 0x0a || c === 0x0d) return j;
    if (c === 0x1b) {
      const next = text[j + 1];
      if (next === undefined) return -1;
      return next === "\\" ? j + 2 : j;
    }
  }
  return -1;
}

function applySgr(style: AnsiStyle, params: string): AnsiStyle {
  const codes = params === "" ? [0] : params.split(/[;:]/).map((p) => (p === "" ? 0 : Number(p)));
  let { fg, bg, bold } = style;
  for (let k = 0; k < codes.length; k++) {
    const c = codes[k] ?? 0;
    if (c === 0) {
      fg = null;
      bg = null;
      bold = false;
    } else if (c === 1) bold = true;
    else if (c === 22) bold = false;
    else if (c >= 30 && c <= 37) fg = c - 30;
    else if (c >= 90 && c <= 97) fg = c - 90 + 8;
    else if (c === 39) fg = null;
    else if (c >= 40 && c <= 47) bg = c - 40;
    else if (c >= 100 && c <= 107) bg = c - 100 + 8;
    else if (c === 49) bg = null;
    else if (c === 38 || c === 48) {
      // 256-colour and true-colour forms are not rendered; skip their arguments.
      k += codes[k + 1] === 5 ? 2 : codes[k + 1] === 2 ? 4 : 0;
    }
  }
  if (fg === style.fg && bg === style.bg && bold === style.bold) return style;
  return { fg, bg, bold };
}

/** Removes every escape sequence and control character except newlines and tabs. */
export function stripAnsi(text: string): string {
  return parseAnsi(text)
    .map((line) => line.map((span) => span.text).join(""))
    .join("\n");
}
