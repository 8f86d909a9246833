/**
 * A terminal's output as plain text, for a model that reads it line by line: escape
 * sequences (CSI, OSC, charset and other two-byte ones) removed, a carriage return
 * starting its line over, a backspace taking back the character before it, other
 * control characters (bell, shift in/out) dropped. This is the line face only; what a
 * full-screen program shows is the screen an emulator renders (decision 190).
 */

// ESC [ params intermediates final | ESC ] … BEL or ST | ESC ( or ) or * or + charset | ESC one byte.
const ESCAPES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escapes are what is removed
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[()*+][ -~]|\u001b[ -~]?|\u009b[0-?]*[ -/]*[@-~]/g;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls are what is removed
const OTHER_CONTROLS = /[\u0000-\u0007\u000b\u000c\u000e-\u001f\u007f]/g;

/** One line (no "\n" in it) as a terminal leaves it. */
function plainLine(line: string): string {
  let out = "";
  let at = 0;
  const text = line.replace(/\r+$/, "");
  for (const ch of text) {
    if (ch === "\r") at = 0;
    else if (ch === "\b") at = Math.max(0, at - 1);
    else {
      out = out.slice(0, at) + ch + out.slice(at + 1);
      at++;
    }
  }
  return out;
}

/**
 * `text` as plain lines: no escape or control character is left but "\n" and "\t".
 * @example plainTerminalText("\u001b[1mok\u001b[0m\r\n50%\r100%\r\n") // "ok\n100%\n"
 */
export function plainTerminalText(text: string): string {
  const stripped = text.replace(ESCAPES, "");
  return stripped
    .split("\n")
    .map((line) => plainLine(line.replace(OTHER_CONTROLS, "")))
    .join("\n");
}
