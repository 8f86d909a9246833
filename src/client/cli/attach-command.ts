/**
 * `toolwire attach <id>` (and `run bash --tty`): a person takes over a tty call's
 * terminal from their own (decision 191). It mints an attach token, puts the person's
 * terminal in raw mode, draws the call's screen, follows its output live and sends every
 * key to the call's terminal (Ctrl-C included) until Ctrl-] detaches or the call ends.
 * While attached the call's terminal takes the person's size; at the end it gets its
 * own size back and the person's terminal is restored.
 */
import {
  DEFAULT_TYPIST,
  type TerminalSize,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
  TYPIST_NAME_PATTERN,
} from "../../protocol/index.ts";
import { withoutModelFooter } from "../call-story.ts";
import { ToolwireError } from "../errors.ts";
import type { ToolwireClient } from "../http-client.ts";
import type { Subscription } from "../subscription.ts";
import { TerminalFeed } from "../terminal-feed.ts";
import type { CliProcess, Keyboard } from "./cli-process.ts";
import { UsageError } from "./usage.ts";

/** The key that detaches: Ctrl-] (as telnet's), byte 0x1d; everything else goes to the call. */
export const DETACH_KEY = 0x1d;
export const DETACH_KEY_NAME = "Ctrl-]";

/**
 * What the person's terminal is set back to at the end: the normal screen, the cursor
 * shown, normal cursor keys and keypad, bracketed paste off, no attributes.
 */
const RESTORE_TERMINAL = "\u001b[?1049l\u001b[?25h\u001b[?1l\u001b>\u001b[?2004l\u001b[0m\r\n";

/** How an attach ended: the person detached, or the call ended (its subscription says how). */
export type AttachEnd =
  | { kind: "detached" }
  | { kind: "ended" }
  | { kind: "failed"; error: ToolwireError };

/**
 * A size a terminal may have: the person's own, within the bounds a tty call takes.
 * @example clampSize({ cols: 500, rows: 3 }) // { cols: 400, rows: 5 }
 */
export function clampSize(size: TerminalSize): TerminalSize {
  const clamp = (n: number, lo: number, hi: number) =>
    Math.min(hi, Math.max(lo, Math.floor(n) || lo));
  return {
    cols: clamp(size.cols, TTY_MIN_SIZE.cols, TTY_MAX_SIZE.cols),
    rows: clamp(size.rows, TTY_MIN_SIZE.rows, TTY_MAX_SIZE.rows),
  };
}

/** The name a person types as: `--as`, else `$USER` when it is a valid name, else the default. */
export function typistName(
  as: string | undefined,
  env: Record<string, string | undefined>,
): string {
  if (as !== undefined) {
    if (!TYPIST_NAME_PATTERN.test(as)) {
      throw new UsageError(
        `--as "${as}" is not a name: 1-64 characters of letters, digits, space and . _ @ -, starting with a letter or digit.`,
        "attach",
      );
    }
    return as;
  }
  const user = env.USER;
  return user && TYPIST_NAME_PATTERN.test(user) ? user : DEFAULT_TYPIST;
}

/**
 * Attaches the person's terminal to call `id` until they detach or it ends.
 * @example const end = await attach(client, "call_1", "ada", proc, keyboard, sub);
 */
export async function attach(
  client: ToolwireClient,
  id: string,
  name: string,
  proc: CliProcess,
  keyboard: Keyboard,
  sub: Subscription,
): Promise<AttachEnd> {
  const granted = await client.attach(id, name);
  const terminal = client.terminal(id, granted.attachToken);
  const out = proc.stdout;
  let refused: ToolwireError | null = null;
  let finish: (end: AttachEnd) => void = () => {};
  const ended = new Promise<AttachEnd>((resolve) => {
    finish = resolve;
  });
  terminal.onTyped = (answer) => {
    // A refusal other than the call having ended (that one the subscription tells) stops it.
    if (answer instanceof ToolwireError && answer.code !== "conflict") {
      refused = answer;
      finish({ kind: "failed", error: answer });
    }
  };
  proc.stderr.write(
    `[toolwire] attached to ${id} as ${granted.name}; ${DETACH_KEY_NAME} detaches\r\n`,
  );
  // The paint resets the screen, so the detach key also goes in the window's title.
  const title = `\u001b]2;toolwire: ${id} as ${granted.name} · ${DETACH_KEY_NAME} detaches\u0007`;
  const feed = new TerminalFeed(
    {
      repaint: (paint) => out.write(`${paint.data}${title}`),
      write: (bytes) => out.write(bytes),
    },
    () => terminal.paint(),
  );
  feed.onPaintFailed = (error) => {
    if (sub.end || sub.status === "settled") return;
    if (error instanceof ToolwireError && error.code === "conflict") return;
    finish({ kind: "failed", error: error as ToolwireError });
  };
  // The call's terminal takes the person's size while they hold it.
  const resize = () => void terminal.resize(clampSize(keyboard.size())).catch(() => {});
  resize();
  const stopResize = keyboard.onResize(resize);
  const restoreKeys = keyboard.raw((data) => {
    const detach = data.indexOf(DETACH_KEY);
    const keys = detach >= 0 ? data.subarray(0, detach) : data;
    if (keys.length > 0) void terminal.type(new TextDecoder().decode(keys));
    if (detach >= 0) finish({ kind: "detached" });
  });
  const follow = () => {
    const first = sub.state?.content[0];
    const text = first?.type === "text" ? withoutModelFooter(first.text) : "";
    if (sub.state) feed.update(text, sub.state.truncation.totalBytes);
    if (sub.end || sub.status === "settled") finish({ kind: "ended" });
    else if (sub.status === "failed" && sub.error) finish({ kind: "failed", error: sub.error });
  };
  const stopFollowing = sub.onChange(follow);
  follow();
  const end = await ended;
  stopFollowing();
  restoreKeys();
  stopResize();
  if (end.kind === "detached" && !refused) await terminal.resize("restore").catch(() => {});
  out.write(RESTORE_TERMINAL);
  return end;
}
