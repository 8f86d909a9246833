/**
 * What of a command's output may reach a terminal. Colours and text attributes (SGR,
 * `ESC [ … m`) pass; every other control character is shown as its visible picture
 * (`␛`, `␇`, …), so output cannot set the clipboard (OSC 52), retitle the window (OSC 0),
 * make the terminal type a status report into the prompt (`ESC [6n`) or reset it
 * (`ESC c`). Tab, newline, carriage return and backspace keep their meaning: progress
 * bars and aligned columns still look right. Output to a pipe or file is not filtered.
 */

/** SGR in full: `ESC [`, parameters, `m`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what this module is for
const SGR = /^\u001b\[[0-9;:]*m/;
/** The start of what may still become an SGR when the next chunk arrives. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what this module is for
const SGR_PREFIX = /\u001b(?:\[[0-9;:]{0,32})?$/;
/** C0 controls other than tab, newline, carriage return and backspace; DEL; the C1 range. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what this module is for
const CONTROL = /[\u0000-\u0007\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/**
 * Filters one stream of text for a terminal, chunk by chunk: an SGR cut between two
 * chunks is held back until it is complete.
 *
 * @example
 * const filter = new TerminalFilter();
 * filter.push("\u001b[31mred\u001b[0m \u001b]52;c;aGk=\u0007") // "\u001b[31mred\u001b[0m ␛]52;c;aGk=␇"
 */
export class TerminalFilter {
  #held = "";

  /** The part of `text` (after what was held back) that can be written now. */
  push(text: string): string {
    let input = this.#held + text;
    this.#held = "";
    const tail = SGR_PREFIX.exec(input);
    if (tail) {
      this.#held = tail[0];
      input = input.slice(0, tail.index);
    }
    return neutralize(input);
  }

  /** Whatever was held back, neutralized: the stream has ended. */
  end(): string {
    const rest = neutralize(this.#held);
    this.#held = "";
    return rest;
  }
}

/** `text` with every control character but SGR, tab, newline, CR and backspace made visible. */
function neutralize(text: string): string {
  let out = "";
  let from = 0;
  for (let at = text.indexOf("\u001b"); at !== -1; at = text.indexOf("\u001b", from)) {
    out += pictures(text.slice(from, at));
    const sgr = SGR.exec(text.slice(at, at + 64));
    if (sgr) {
      out += sgr[0];
      from = at + sgr[0].length;
    } else {
      out += "␛";
      from = at + 1;
    }
  }
  return out + pictures(text.slice(from));
}

function pictures(text: string): string {
  return text.replace(CONTROL, (ch) => {
    const code = ch.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return "␡";
    // C1 controls have no pictures of their own: show the code.
    return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
  });
}
