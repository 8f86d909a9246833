/**
 * A terminal's screen as the bytes that draw it again (decision 191): what a browser or
 * a `toolwire attach` that joins late writes into its own emulator before the live
 * output, so it shows at once the screen the model reads — its characters, colours and
 * attributes, the alternate screen, the cursor and the keyboard modes that change what
 * keys send (application cursor keys, bracketed paste). Scrollback is not repainted:
 * the host's emulator keeps none.
 */
import type xterm from "@xterm/headless";

const ESC = "\u001b";

type Cell = xterm.IBufferCell;

/** xterm's colour mode of the 16 basic colours (`ESC[31m`), apart from the 256 (`ESC[38;5;…m`). */
const PALETTE_16 = 0x1000000;

/** The SGR parameters of one colour: default, one of the 16, one of the 256, or 24-bit RGB. */
function colourParams(cell: Cell, ground: "fg" | "bg"): string {
  const fg = ground === "fg";
  if (fg ? cell.isFgDefault() : cell.isBgDefault()) return fg ? "39" : "49";
  const colour = fg ? cell.getFgColor() : cell.getBgColor();
  if (fg ? cell.isFgRGB() : cell.isBgRGB()) {
    return `${fg ? 38 : 48};2;${(colour >> 16) & 255};${(colour >> 8) & 255};${colour & 255}`;
  }
  if ((fg ? cell.getFgColorMode() : cell.getBgColorMode()) === PALETTE_16) {
    // 30–37 / 90–97 (40–47 / 100–107): so the copy keeps the colour's kind as well.
    return String((colour < 8 ? (fg ? 30 : 40) : fg ? 82 : 92) + colour);
  }
  return `${fg ? 38 : 48};5;${colour}`;
}

/** The whole SGR state of a cell, from a reset: `ESC[0;1;38;5;2m`. */
function sgrOf(cell: Cell): string {
  const params = ["0"];
  if (cell.isBold()) params.push("1");
  if (cell.isDim()) params.push("2");
  if (cell.isItalic()) params.push("3");
  if (cell.isUnderline()) params.push("4");
  if (cell.isBlink()) params.push("5");
  if (cell.isInverse()) params.push("7");
  if (cell.isInvisible()) params.push("8");
  if (cell.isStrikethrough()) params.push("9");
  if (cell.isOverline()) params.push("53");
  if (!cell.isFgDefault()) params.push(colourParams(cell, "fg"));
  if (!cell.isBgDefault()) params.push(colourParams(cell, "bg"));
  return `${ESC}[${params.join(";")}m`;
}

/** One row, each run of equal attributes introduced by its SGR; trailing default blanks left out. */
function paintRow(line: xterm.IBufferLine, cols: number, work: Cell): string {
  let end = cols;
  // Blank default cells at the end need not be drawn: the screen was cleared first.
  while (end > 0) {
    const cell = line.getCell(end - 1, work);
    if (cell === undefined || cell.getChars() !== "" || !cell.isAttributeDefault()) break;
    end--;
  }
  let out = "";
  let sgr = `${ESC}[0m`;
  for (let x = 0; x < end; x++) {
    const cell = line.getCell(x, work);
    if (!cell) break;
    // The second half of a wide character: drawn with its first half.
    if (cell.getWidth() === 0) continue;
    const next = sgrOf(cell);
    if (next !== sgr) {
      out += next;
      sgr = next;
    }
    out += cell.getChars() || " ";
  }
  // The next row starts from no attributes.
  return sgr === `${ESC}[0m` ? out : `${out}${ESC}[0m`;
}

/** The modes that change what the keyboard sends or how the program reads it. */
function modesOf(term: xterm.Terminal): string {
  const m = term.modes;
  let out = "";
  if (m.applicationCursorKeysMode) out += `${ESC}[?1h`;
  if (m.applicationKeypadMode) out += `${ESC}=`;
  if (m.bracketedPasteMode) out += `${ESC}[?2004h`;
  if (!m.wraparoundMode) out += `${ESC}[?7l`;
  return out;
}

/**
 * The bytes that draw `term`'s screen on a fresh terminal of the same size.
 * @example paintScreen(term) // "\u001b[?1049h\u001b[H\u001b[2J\u001b[1;1H…"
 */
export function paintScreen(term: xterm.Terminal): string {
  const buffer = term.buffer.active;
  const work = buffer.getNullCell();
  // Reset, then the alternate screen when a full-screen program is on it.
  let out = `${ESC}c`;
  if (buffer.type === "alternate") out += `${ESC}[?1049h`;
  out += `${ESC}[H${ESC}[2J`;
  for (let row = 0; row < term.rows; row++) {
    const line = buffer.getLine(buffer.baseY + row);
    if (!line) continue;
    const drawn = paintRow(line, term.cols, work);
    if (drawn !== "") out += `${ESC}[${row + 1};1H${drawn}`;
  }
  out += `${ESC}[0m${modesOf(term)}${ESC}[${buffer.cursorY + 1};${buffer.cursorX + 1}H`;
  return out;
}
