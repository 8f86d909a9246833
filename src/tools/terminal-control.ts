/**
 * A running tty call's terminal as people reach it (decision 191): the bytes that draw
 * its screen again, a person's keys, and its size. Each goes to the call's sandbox host,
 * the same terminal `write_stdin` types into.
 */
import { execIdFor, type TerminalPaint, type TerminalSize } from "../execenv/index.ts";
import type { InvocationView } from "../protocol/index.ts";
import { sandboxClientFor } from "./sandbox.ts";
import { isTtyCall } from "./terminal-view.ts";

export { ownTerminalSize } from "./terminal-view.ts";

/**
 * Why a call has no terminal to reach now, in words for its 409; null when it has one.
 * @example terminalRefusal(view) // "call_1 has ended; its output is all there is"
 */
export function terminalRefusal(view: InvocationView): string | null {
  if (!isTtyCall(view)) {
    return `${view.id} is not a terminal: only bash with tty: true can be attached to`;
  }
  if (view.status !== "running") return `${view.id} has ended; its output is all there is`;
  return null;
}

/** The bytes that draw the call's screen, and the output byte they show. */
export async function paintOf(env: Env, view: InvocationView): Promise<TerminalPaint> {
  return sandboxClientFor({ env, sandbox: view.sandbox }).paint(await execIdFor(view.id));
}

/** Types `data` into the call's terminal at once (no wait for the output to settle). */
export async function typeInto(env: Env, view: InvocationView, data: string): Promise<void> {
  const client = sandboxClientFor({ env, sandbox: view.sandbox });
  await client.input(await execIdFor(view.id), { data, waitMs: 0 });
}

/** Resizes the call's terminal. */
export async function resizeTerminal(
  env: Env,
  view: InvocationView,
  size: TerminalSize,
): Promise<void> {
  const client = sandboxClientFor({ env, sandbox: view.sandbox });
  await client.resize(await execIdFor(view.id), size);
}
