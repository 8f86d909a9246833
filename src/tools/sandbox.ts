/**
 * What the sandbox tools share: the client for the sandbox a call was routed to, and the
 * shape of a lookup tool (`read`, `grep`, `glob`): one request, one text, head-retained.
 */
import { type ZodType, z } from "zod";
import type { JsonObject } from "../core/chord/types.ts";
import { resolveSandbox, SandboxClient, SandboxHttpError } from "../execenv/index.ts";
import { OUTPUT_BYTES } from "../protocol/index.ts";
import { defineTool } from "./registry.ts";
import type { ToolContext, ToolDefinition } from "./types.ts";

/**
 * A client for `context.sandbox`; throws the routing error (unknown name, missing
 * token) as a message the model and the user can act on.
 * @example const client = sandboxClientFor(context);
 */
export function sandboxClientFor(context: Pick<ToolContext, "env" | "sandbox">): SandboxClient {
  const target = resolveSandbox(context.env, context.sandbox);
  if (!target.ok) throw new Error(target.error.message);
  return new SandboxClient(target.value.url, target.value.token, target.value.fetch);
}

/**
 * An optional `limit` parameter: a whole number from 1 to `max`.
 * @example limitParam(1000, "Most paths to return (default 1000)")
 */
export function limitParam(max: number, description: string) {
  return z.number().int().min(1).max(max).optional().describe(description);
}

/**
 * Runs one host request; a refusal (a 4xx: bad path, edit not unique, too large)
 * becomes an error with the host's own message, the one the model should act on.
 * @example const result = await asked(() => client.edit(req, signal));
 */
export async function asked<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (err instanceof SandboxHttpError && err.status < 500) throw new Error(err.reason);
    throw err;
  }
}

/** What a lookup shows: its text, and optionally `details` beside it. */
export type LookupAnswer = string | { text: string; details: JsonObject };

/** Lines a lookup's notice may add after its items. */
const NOTICE_LINES = 4;

/**
 * A replay-safe sandbox tool that asks the host once and shows one text: the head of it
 * is kept, at most `maxBytes` (default 50 KiB) and `maxItems` lines plus its notice.
 * @example
 * export const globTool = sandboxLookup({ name: "glob", description, params, maxItems: 100_000,
 *   lookup: async (client, params, signal) => formatGlob(await client.glob(params, signal)) });
 */
export function sandboxLookup<S extends ZodType>(spec: {
  name: string;
  description: string;
  params: S;
  maxItems: number;
  maxBytes?: number;
  lookup(client: SandboxClient, params: z.output<S>, signal: AbortSignal): Promise<LookupAnswer>;
}): ToolDefinition<z.output<S>> {
  const maxBytes = spec.maxBytes ?? OUTPUT_BYTES;
  return defineTool({
    name: spec.name,
    description: spec.description,
    params: spec.params,
    output: { retain: "head", maxBytes, maxLines: spec.maxItems + NOTICE_LINES },
    replaySafe: true,
    sandbox: true,
    async execute({ params, out, signal, context }) {
      const answer = await spec.lookup(sandboxClientFor(context), params, signal);
      if (typeof answer === "string") return out.replace(answer);
      out.replace(answer.text);
      Object.assign(out.details as JsonObject, answer.details);
    },
  });
}
