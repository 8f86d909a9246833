/**
 * Who typed into a tty call's terminal (decision 191): a person who took over from the
 * viewer or `toolwire attach` with an attach token, or the model with `write_stdin`.
 * The call's `details.lastInput` says the latest for everyone watching, and the model's
 * next read says what people typed since its last one. The names, caps and words live
 * here; the Worker checks them and every face reads them from here.
 */

/** The `details` field of a tty call that names its latest input. */
export const LAST_INPUT_DETAIL = "lastInput";

/** Who the model is in `lastInput.by`: a person's name can never be this. */
export const MODEL_TYPIST = "model";

/** A person's name when the attach token was minted without one. */
export const DEFAULT_TYPIST = "a person";

/** What a person's name may be: 1–64 characters of letters, digits, space and `._@-`, starting with a letter or digit. */
export const TYPIST_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/;

/** How long an attach token is good for: one hour, as a viewer link. */
export const ATTACH_TOKEN_TTL_SECONDS = 3600;

/**
 * How long after an input its echo goes out unpaced: the sandbox host's update stream
 * and the call's Durable Object each publish the first change within this window at once
 * rather than at their pacing deadline (a key's echo is what its typist waits for). One
 * change per input, so a program that floods output stays paced.
 */
export const INPUT_ECHO_WINDOW_MS = 500;

/**
 * A take-over link's fragment (`#attach=…`, and on the run page `&call=<id>`, the call it
 * types into): a fragment is never sent to a server or in a `Referer`, and the page reads
 * it to give that call's terminal the keyboard.
 * @example `${viewUrl}#${attachFragment(token)}`; `${runViewUrl}#${attachFragment(token, "call_1")}`
 */
export function attachFragment(attachToken: string, callId?: string): string {
  const fragment = new URLSearchParams({ attach: attachToken });
  if (callId !== undefined) fragment.set("call", callId);
  return fragment.toString();
}

/**
 * What a page's fragment gives: the attach token and the call it names (null when it
 * names none: the viewer's own call); null without a token.
 * @example attachOfFragment(location.hash) // { attachToken: "v1.…", callId: "call_1" }
 */
export function attachOfFragment(
  hash: string,
): { attachToken: string; callId: string | null } | null {
  const fragment = new URLSearchParams(hash.replace(/^#/, ""));
  const attachToken = fragment.get("attach");
  return attachToken ? { attachToken, callId: fragment.get("call") } : null;
}

/** Most people's inputs one model read reports one by one; the rest are counted. */
export const TYPED_REPORT_ENTRIES = 5;

/** The `details` field of a tty call whose terminal a person resized: its size now, and whose. */
export const HELD_SIZE_DETAIL = "terminalSize";

/**
 * A person's size for the terminal while they hold the keyboard (decision 193); the call's
 * own size (its `cols`/`rows`) comes back when they let go.
 */
export interface HeldSize {
  cols: number;
  rows: number;
  by: string;
}

/**
 * The size a person holds the terminal at, from the call's details; null when it is the call's own.
 * @example heldSizeOf({ terminalSize: { cols: 100, rows: 30, by: "ada" } }) // { cols: 100, … }
 */
export function heldSizeOf(details: unknown): HeldSize | null {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return null;
  const value = (details as Record<string, unknown>)[HELD_SIZE_DETAIL];
  if (typeof value !== "object" || value === null) return null;
  const { cols, rows, by } = value as Record<string, unknown>;
  if (typeof cols !== "number" || typeof rows !== "number" || typeof by !== "string") return null;
  return { cols, rows, by };
}

/**
 * Sets (or, with null, removes) the held size on a call's details (an object; anything else is left).
 * @example markHeldSize(out.details, null) // the call's own size again
 */
export function markHeldSize(details: unknown, size: HeldSize | null): void {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return;
  const record = details as Record<string, unknown>;
  if (size) record[HELD_SIZE_DETAIL] = { ...size };
  else if (HELD_SIZE_DETAIL in record) delete record[HELD_SIZE_DETAIL];
}

/** One input into a terminal: who, when (ms since the epoch) and how many bytes. */
export interface TypedInput {
  by: string;
  at: number;
  bytes: number;
}

/**
 * The latest input of a call, from its details; null when nobody typed yet.
 * @example lastInputOf({ lastInput: { by: "ada", at: 1, bytes: 1 } }) // { by: "ada", … }
 */
export function lastInputOf(details: unknown): TypedInput | null {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return null;
  const value = (details as Record<string, unknown>)[LAST_INPUT_DETAIL];
  if (typeof value !== "object" || value === null) return null;
  const { by, at, bytes } = value as Record<string, unknown>;
  if (typeof by !== "string" || typeof at !== "number" || typeof bytes !== "number") return null;
  return { by, at, bytes };
}

/**
 * Sets the latest input on a call's details (an object; anything else is left).
 * @example markLastInput(out.details, { by: "model", at: Date.now(), bytes: 2 })
 */
export function markLastInput(details: unknown, input: TypedInput): void {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return;
  (details as Record<string, unknown>)[LAST_INPUT_DETAIL] = { ...input };
}

/**
 * Who typed, in the words every face uses.
 * @example typistWords({ by: "model", at: 0, bytes: 2 }) // "the model (write_stdin)"
 */
export function typistWords(input: TypedInput): string {
  return input.by === MODEL_TYPIST ? "the model (write_stdin)" : input.by;
}

/**
 * The line a model reads when people typed into the terminal since its last read.
 * @example typedByPeopleLine([{ by: "ada", at: 0, bytes: 1 }]) // "[a person typed into this terminal since your last read: ada (1 byte)]"
 */
export function typedByPeopleLine(inputs: readonly TypedInput[]): string {
  if (inputs.length === 0) return "";
  const byName = new Map<string, { count: number; bytes: number }>();
  for (const input of inputs) {
    const seen = byName.get(input.by) ?? { count: 0, bytes: 0 };
    seen.count++;
    seen.bytes += input.bytes;
    byName.set(input.by, seen);
  }
  const names = [...byName.entries()]
    .slice(0, TYPED_REPORT_ENTRIES)
    .map(
      ([name, s]) =>
        `${name} (${s.bytes.toLocaleString("en-US")} ${s.bytes === 1 ? "byte" : "bytes"})`,
    );
  const more = byName.size - names.length;
  const people = byName.size === 1 ? "a person" : "people";
  return `[${people} typed into this terminal since your last read: ${names.join(", ")}${more > 0 ? ` and ${more} more` : ""}; the screen and lines above include what they did]`;
}
