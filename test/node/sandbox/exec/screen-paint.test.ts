// The bytes that draw a screen again (decision 191): a fresh emulator of the same size
// that writes them shows the same cells — characters, colours, attributes, wide
// characters — the same screen (normal or alternate), cursor and keyboard modes.
import xterm from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { paintScreen } from "../../../../sandbox/exec/screen-paint.ts";

const written = (term: xterm.Terminal, data: string) =>
  new Promise<void>((resolve) => term.write(data, resolve));

function fresh(cols = 40, rows = 10) {
  return new xterm.Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
}

/** Every cell as text, with its attributes and colours. */
function cells(term: xterm.Terminal): string[] {
  const buffer = term.buffer.active;
  const cell = buffer.getNullCell();
  const rows: string[] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.baseY + y);
    const parts: string[] = [];
    for (let x = 0; x < term.cols; x++) {
      line?.getCell(x, cell);
      parts.push(
        [
          cell.getChars() || " ",
          cell.getWidth(),
          cell.getFgColorMode(),
          cell.getFgColor(),
          cell.getBgColorMode(),
          cell.getBgColor(),
          cell.isBold(),
          cell.isItalic(),
          cell.isUnderline(),
          cell.isInverse(),
          cell.isDim(),
        ].join(","),
      );
    }
    rows.push(parts.join("|"));
  }
  return rows;
}

async function roundTrip(source: xterm.Terminal): Promise<xterm.Terminal> {
  const copy = fresh(source.cols, source.rows);
  await written(copy, paintScreen(source));
  return copy;
}

describe("paintScreen", () => {
  it("redraws colours, attributes and wide characters, and the cursor, on the normal screen", async () => {
    const term = fresh();
    await written(
      term,
      "plain\r\n\u001b[1;31mbold red\u001b[0m \u001b[38;5;208morange\u001b[0m\r\n" +
        "\u001b[48;2;10;20;30;3mrgb italic\u001b[0m \u001b[4;7munder inv\u001b[0m\r\n" +
        "wide: 漢字 ok\r\n\u001b[2mdim\u001b[0m tail",
    );
    const copy = await roundTrip(term);
    expect(cells(copy)).toEqual(cells(term));
    expect(copy.buffer.active.type).toBe("normal");
    expect([copy.buffer.active.cursorX, copy.buffer.active.cursorY]).toEqual([8, 4]);
  });

  it("redraws a full-screen program's alternate screen, its modes and a full last row", async () => {
    const term = fresh(20, 5);
    await written(term, "before\r\n");
    // As less and vim do: the alternate screen, application cursor keys, bracketed paste.
    await written(term, "\u001b[?1049h\u001b[?1h\u001b=\u001b[?2004h\u001b[H");
    for (let row = 1; row <= 5; row++) {
      await written(term, `\u001b[${row};1H${String(row).repeat(20)}`);
    }
    await written(term, "\u001b[3;5H");
    const copy = await roundTrip(term);
    expect(copy.buffer.active.type).toBe("alternate");
    expect(cells(copy)).toEqual(cells(term));
    expect(copy.modes.applicationCursorKeysMode).toBe(true);
    expect(copy.modes.applicationKeypadMode).toBe(true);
    expect(copy.modes.bracketedPasteMode).toBe(true);
    expect([copy.buffer.active.cursorX, copy.buffer.active.cursorY]).toEqual([4, 2]);
    // Leaving the alternate screen on the copy shows the normal one as it was reset: empty.
    await written(copy, "\u001b[?1049l");
    expect(copy.buffer.active.type).toBe("normal");
  });

  it("an empty screen is a reset and the cursor home", async () => {
    const term = fresh();
    expect(paintScreen(term)).toBe("\u001bc\u001b[H\u001b[2J\u001b[0m\u001b[1;1H");
    const copy = await roundTrip(term);
    expect(cells(copy)).toEqual(cells(term));
  });
});
