/**
 * The keys `write_stdin` names (`keys: ["Enter", "Up", "C-c"]`): the server sends their
 * bytes and every client that describes the tool to a model (the pi extension) lists
 * the same names, both from here.
 */

/** The bytes a terminal's keyboard sends for each named key (xterm's, in normal cursor mode). */
export const STDIN_KEYS: Readonly<Record<string, string>> = {
  Enter: "\r",
  Tab: "\t",
  Escape: "\u001b",
  Backspace: "\u007f",
  Space: " ",
  Up: "\u001b[A",
  Down: "\u001b[B",
  Right: "\u001b[C",
  Left: "\u001b[D",
  Home: "\u001b[H",
  End: "\u001b[F",
  PageUp: "\u001b[5~",
  PageDown: "\u001b[6~",
  Insert: "\u001b[2~",
  Delete: "\u001b[3~",
  ...Object.fromEntries(
    Array.from({ length: 26 }, (_, i) => [
      `C-${String.fromCharCode(97 + i)}`,
      String.fromCharCode(1 + i),
    ]),
  ),
  "C-\\": "\u001c",
  "C-]": "\u001d",
};

/** The names `keys` accepts, in the table's order. */
export const STDIN_KEY_NAMES = Object.keys(STDIN_KEYS) as [string, ...string[]];
