/**
 * The output a background call's answer gave, without the line that says whether the
 * command waits for input (`[waiting for input…]` / `[not waiting for input…]`, which
 * every first moment, `job_output` and `write_stdin` answer carries before its footer:
 * docs/steering.md).
 */
const INPUT_LINE = /^\[(?:not )?waiting for input\b[^\n]*\]\n?/gm;

export function withoutInputLine(text: string): string {
  return text.replace(INPUT_LINE, "");
}
