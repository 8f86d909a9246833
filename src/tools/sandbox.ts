/**
 * The sandbox a tool call was routed to, as a client. Shared by bash, read, grep, glob.
 */
import { resolveSandbox, SandboxClient } from "../execenv/index.ts";
import type { ToolContext } from "./types.ts";

/**
 * A client for `context.sandbox`; throws the routing error (unknown name, missing
 * token) as a message the model and the user can act on.
 * @example const client = sandboxClientFor(context);
 */
export function sandboxClientFor(context: ToolContext): SandboxClient {
  const target = resolveSandbox(context.env, context.sandbox);
  if (!target.ok) throw new Error(target.error.message);
  return new SandboxClient(target.value.url, target.value.token);
}
