/**
 * What a model is told about a background call's input (decision 190): the terminal's
 * screen when a full-screen program drew it, and whether the command waits for input,
 * as the sandbox host read it from the kernel. bash's first moment, job_output and
 * write_stdin all say it the same way.
 */
import { plainTerminalText } from "../core/output/index.ts";
import { execIdFor, type InputState, type TerminalScreen } from "../execenv/index.ts";
import {
  heldSizeOf,
  type InvocationView,
  type TerminalSize,
  TTY_DEFAULT_SIZE,
} from "../protocol/index.ts";
import { sandboxClientFor } from "./sandbox.ts";

/** The args of a bash call started with `tty: true`. */
export function isTtyCall(view: Pick<InvocationView, "tool" | "args">): boolean {
  const args = view.args as { tty?: unknown } | null;
  return view.tool === "bash" && typeof args === "object" && args?.tty === true;
}

/** The call's own size: what its args asked for, else the default. */
export function ownTerminalSize(
  view: Pick<InvocationView, "args">,
  fallback: TerminalSize = TTY_DEFAULT_SIZE,
): TerminalSize {
  const args = view.args as { cols?: unknown; rows?: unknown } | null;
  return {
    cols: typeof args?.cols === "number" ? args.cols : fallback.cols,
    rows: typeof args?.rows === "number" ? args.rows : fallback.rows,
  };
}

/**
 * Where a running background call's input stands, from its sandbox host; null when it
 * has ended or the host no longer knows it (its output then says all there is).
 * @example const state = await inputStateOf(env, view);
 */
export async function inputStateOf(env: Env, view: InvocationView): Promise<InputState | null> {
  if (view.status !== "running" || view.tool !== "bash") return null;
  try {
    const client = sandboxClientFor({ env, sandbox: view.sandbox });
    return await client.terminal(await execIdFor(view.id));
  } catch {
    return null;
  }
}

/** A tty call's lines as the model reads them: escapes stripped, carriage returns applied. */
export function modelLines(view: Pick<InvocationView, "tool" | "args">, lines: string[]): string[] {
  if (!isTtyCall(view)) return lines;
  return lines.map((line) => plainTerminalText(line));
}

/** The screen as text: its rows (trailing blank rows left out) and where the cursor is. */
function screenText(screen: TerminalScreen): string {
  const rows = [...screen.lines];
  while (rows.length > screen.cursor.row + 1 && rows[rows.length - 1] === "") rows.pop();
  return `${rows.join("\n")}\n[screen ${screen.cols}×${screen.rows} · cursor at row ${screen.cursor.row + 1}, column ${screen.cursor.col + 1}]\n`;
}

/** The one line that says whether the command waits for input, naming its prompt. */
function inputLine(state: InputState): string {
  if (state.exited) return "";
  if (state.awaitingInput) {
    const prompt = state.prompt ? `: ${JSON.stringify(state.prompt)}` : "";
    return `[waiting for input${prompt} · write_stdin answers it]`;
  }
  return state.inputOpen
    ? "[not waiting for input: the command is working]"
    : "[not waiting for input; its input is closed]";
}

/**
 * The line that tells the model its terminal is not at its own size: a person holding the
 * keyboard resized it (decision 193); "" when it is at its own size.
 */
function sizeLine(
  view: Pick<InvocationView, "tool" | "args" | "state">,
  state: InputState,
): string {
  const screen = state.screen;
  if (!screen || state.exited || !isTtyCall(view)) return "";
  const own = ownTerminalSize(view);
  if (screen.cols === own.cols && screen.rows === own.rows) return "";
  const held = heldSizeOf(view.state.details);
  const who = held ? `${held.by}, who holds the keyboard,` : "a person holding the keyboard";
  return `[the terminal is ${screen.cols}×${screen.rows}, not your ${own.cols}×${own.rows}: ${who} resized it; your size comes back when they let go]\n`;
}

/**
 * What the model reads of a call's input state: the screen when it is a full-screen
 * program's, a line when a person holds the terminal at another size, then the input line.
 */
export function inputText(
  state: InputState | null,
  view?: Pick<InvocationView, "tool" | "args" | "state">,
): string {
  if (!state) return "";
  const screen = state.screen?.alternate ? screenText(state.screen) : "";
  const size = view ? sizeLine(view, state) : "";
  const line = inputLine(state);
  return `${screen}${size}${line === "" ? "" : `${line}\n`}`;
}

/** The same as data, for `details`: `awaitingInput`, the prompt, and the screen's structure. */
export function inputDetails(state: InputState | null): Record<string, unknown> {
  if (!state) return {};
  return {
    awaitingInput: state.awaitingInput,
    ...(state.prompt !== undefined ? { prompt: state.prompt } : {}),
    ...(state.screen ? { screen: state.screen } : {}),
  };
}
