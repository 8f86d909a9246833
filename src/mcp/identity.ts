/**
 * Which invocation a `tools/call` is (docs/decisions/102). A retried call with the same
 * identity joins the invocation the first attempt started instead of running again:
 *
 * 1. `_meta["io.toolwire/invocation"].id` (or `"io.toolwire/callId"`), when the client
 *    names one: it survives new sessions, new connections and either protocol version.
 * 2. Otherwise, on a 2025-11-25 session: derived from the session id and the JSON-RPC
 *    request id, so resending the same request on the same session (after a broken
 *    stream) joins, and `notifications/cancelled { requestId }` finds the invocation.
 * 3. Otherwise (2026-07-28 has no session): a fresh id per call.
 */
import { INVOCATION_ID_PATTERN } from "../protocol/index.ts";
import { META_KEY } from "./fold.ts";

/** `_meta` key a client may set to name the invocation a call is. */
const CALL_ID_META_KEY = "io.toolwire/callId";

/** The error message for an unusable id in `_meta`, naming the field. */
export class CallIdError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CallIdError";
  }
}

function metaId(meta: Record<string, unknown> | undefined): string | undefined {
  if (meta === undefined) return undefined;
  const direct = meta[CALL_ID_META_KEY];
  const nested = meta[META_KEY];
  const fromNested =
    typeof nested === "object" && nested !== null ? (nested as { id?: unknown }).id : undefined;
  const [field, value] =
    direct !== undefined ? [CALL_ID_META_KEY, direct] : [`${META_KEY}.id`, fromNested];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !INVOCATION_ID_PATTERN.test(value)) {
    throw new CallIdError(
      `_meta["${field}"] must be 1-128 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The invocation id of a session's request: `mcp_` + 32 hex digits of
 * SHA-256(session id, request id).
 * @example await sessionCallId("ms1.abc", 7) // "mcp_3f…"
 */
export async function sessionCallId(
  sessionId: string,
  requestId: string | number,
): Promise<string> {
  const hex = await sha256Hex(
    `toolwire-mcp-call\u0000${sessionId}\u0000${JSON.stringify(requestId)}`,
  );
  return `mcp_${hex.slice(0, 32)}`;
}

/** An invocation id and which rule gave it. */
interface CallIdentity {
  id: string;
  from: "meta" | "session" | "fresh";
}

/**
 * The invocation id of one `tools/call`, by the rules above.
 * @example await callIdentity({ meta: { "io.toolwire/callId": "build-42" } }) // { id: "build-42", from: "meta" }
 */
export async function callIdentity(call: {
  meta?: Record<string, unknown>;
  sessionId?: string;
  requestId?: string | number;
}): Promise<CallIdentity> {
  const named = metaId(call.meta);
  if (named !== undefined) return { id: named, from: "meta" };
  if (call.sessionId !== undefined && call.requestId !== undefined) {
    return { id: await sessionCallId(call.sessionId, call.requestId), from: "session" };
  }
  return { id: `mcp_${crypto.randomUUID().replaceAll("-", "")}`, from: "fresh" };
}
