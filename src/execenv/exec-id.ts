import { EXEC_ID_PATTERN } from "../protocol/index.ts";

/**
 * The exec id for a tool call: the call id itself when it is a valid exec id, else a
 * stable hash of it (so a Durable Object that lost its memory derives the same id and
 * can reattach).
 * @example await execIdFor("call_01J9") // "call_01J9"
 * @example await execIdFor("call/with spaces") // "x-3f1c…" (32 hex digits)
 */
export async function execIdFor(toolCallId: string): Promise<string> {
  if (EXEC_ID_PATTERN.test(toolCallId)) return toolCallId;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(toolCallId));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  return `x-${hex.slice(0, 32)}`;
}
