import type { ToolwireError } from "../errors.ts";

/**
 * What the viewer's failure box says. A page cannot renew its own link: when a
 * reconnect is refused because the link's token expired, it says in plain words how to
 * get a new one instead of showing the server's wording about tokens.
 *
 * @example
 * describeFailure(new ToolwireError("unauthorized", "the subscribe token has expired; …", 401), "call_1")
 * // "This link has expired (viewer links last one hour), so the page cannot reconnect. Ask for a new one with toolwire link call_1, or from your agent. …"
 */
export function describeFailure(error: ToolwireError, toolCallId: string | null): string {
  if (error.code === "unauthorized" && /expired/i.test(error.message)) {
    const command = `toolwire link ${toolCallId ?? "<id>"}`;
    return (
      "This link has expired (viewer links last one hour), so the page cannot reconnect. " +
      `Ask for a new one with ${command}, or from your agent. ` +
      "The output shown is what arrived before the link expired."
    );
  }
  return `Cannot follow this invocation: ${error.message}`;
}
