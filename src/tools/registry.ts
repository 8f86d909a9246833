/**
 * The tool registry: every tool the Worker accepts and the DO runs, built-in or custom.
 * A tool's parameters are declared once, as a zod schema; `defineTool` derives both the
 * JSON Schema served by `GET /v1/tools` and the `parse` the Worker validates args with.
 * Built-ins are registered by `src/tools/index.ts`; import the registry from there.
 */
import { type ZodError, type ZodType, z } from "zod";
import { fitsDepth, MAX_JSON_DEPTH } from "../core/chord/index.ts";
import type { JsonValue } from "../core/chord/types.ts";
import { DEFAULT_OUTPUT_POLICY, type OutputPolicy } from "../core/output/types.ts";
import type { ToolDefinition, ToolRun, ToolStretch } from "./types.ts";

/** Any registered tool, whatever its parameter type. */
export type AnyTool = ToolDefinition<unknown>;

/** Thrown by a tool's `parse` for bad args; the message names each field and problem. */
export class ToolArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolArgsError";
  }
}

/**
 * One line per issue, each prefixed with the path into the value (`args.url: Invalid URL`).
 * @example formatIssues("body", error) // "body.tool: expected string, received number"
 */
export function formatIssues(prefix: string, error: ZodError): string {
  return error.issues
    .map((issue) => {
      let path = prefix;
      for (const seg of issue.path) {
        path += typeof seg === "number" ? `[${seg}]` : `.${String(seg)}`;
      }
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

/** What every tool declares, however it runs. */
interface ToolDescription<S extends ZodType> {
  name: string;
  description: string;
  /** The one declaration of the parameters. */
  params: S;
  /** Overrides of the default policy (tail, 50 KiB, 2000 lines). */
  output?: Partial<OutputPolicy>;
  /** The policy of one call, when its args choose it (bash's head/tail/maxBytes). */
  outputFor?: (params: z.output<S>) => OutputPolicy;
  replaySafe: boolean;
  /** Runs on a sandbox host (default false): the call is created only if the host answers. */
  sandbox?: boolean;
}

/** What a tool author writes; `defineTool` turns it into a `ToolDefinition`. */
type ToolSpec<S extends ZodType> = ToolDescription<S> &
  (
    | { execute(run: ToolRun<z.output<S>>): Promise<void>; stretch?: undefined }
    | { stretch: ToolStretch<z.output<S>>; execute?: undefined }
  );

/**
 * Builds a tool from a zod schema for its parameters.
 * @example
 * const echo = defineTool({
 *   name: "echo", description: "Writes its text back.", replaySafe: true,
 *   params: z.strictObject({ text: z.string() }),
 *   async execute({ params, out }) { out.write(params.text); },
 * });
 * registerTool(echo);
 */
export function defineTool<S extends ZodType>(spec: ToolSpec<S>): ToolDefinition<z.output<S>> {
  const { execute, stretch } = spec;
  return { ...describeTool(spec), ...(execute ? { execute } : { stretch }) };
}

/** Schema, parsing and policy of a tool, without how it runs. */
function describeTool<S extends ZodType>(spec: ToolDescription<S>): ToolDefinition<z.output<S>> {
  return {
    name: spec.name,
    description: spec.description,
    parameters: z.toJSONSchema(spec.params, { io: "input" }) as JsonValue,
    parse(args: unknown): z.output<S> {
      const result = spec.params.safeParse(args);
      if (!result.success) throw new ToolArgsError(formatIssues("args", result.error));
      return result.data;
    },
    output: { ...DEFAULT_OUTPUT_POLICY, ...spec.output },
    ...(spec.outputFor ? { outputFor: spec.outputFor } : {}),
    replaySafe: spec.replaySafe,
    sandbox: spec.sandbox ?? false,
  };
}

const tools = new Map<string, AnyTool>();

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/**
 * Adds a tool. Names are unique; a second tool with a taken name throws.
 * @example registerTool(defineTool({ name: "echo", ... }))
 */
export function registerTool(def: AnyTool): void {
  if (!TOOL_NAME.test(def.name)) {
    throw new TypeError(
      `tool name ${JSON.stringify(def.name)} must be 1-64 letters, digits, "_" or "-", starting with a letter`,
    );
  }
  if (tools.has(def.name)) throw new TypeError(`a tool named "${def.name}" is already registered`);
  tools.set(def.name, def);
}

/**
 * The tool called `name`, if registered.
 * @example getTool("web_fetch")?.parse({ url: "https://example.com" })
 */
export function getTool(name: string): AnyTool | undefined {
  return tools.get(name);
}

/**
 * Every registered tool, in registration order.
 * @example listTools().map((t) => t.name) // ["web_fetch", "external", ...]
 */
export function listTools(): AnyTool[] {
  return [...tools.values()];
}

/**
 * `z.json()` that first refuses values nesting arrays and objects more than `levels`
 * deep (docs/decisions/005): zod walks JSON recursively, so a deep value would otherwise
 * exhaust the stack before any message could name the problem.
 *
 * @example cappedJson(3).parse([[[1]]]) // ok; [[[[1]]]] fails
 */
function cappedJson(levels: number) {
  return z
    .unknown()
    .refine((v) => fitsDepth(v, levels), {
      message: `must nest arrays and objects at most ${levels} levels deep (MAX_JSON_DEPTH ${MAX_JSON_DEPTH} for the whole args); flatten it or send the deep part as a JSON string`,
    })
    .pipe(z.json());
}

/** Name of the agent-side tool whose output comes only from the producer API. */
export const EXTERNAL_TOOL = "external";

/**
 * The agent-side tool: the agent runs it and streams its output through
 * `POST /v1/invocations/:id/output`: it has no `execute`, the DO runs nothing for it.
 */
export const externalTool = describeTool({
  name: EXTERNAL_TOOL,
  description:
    "A tool the agent runs itself. Its output is streamed through POST /v1/invocations/:id/output (write, replace, image, details, usage, addTools, terminate, then end).",
  params: z.strictObject({
    name: z.string().min(1).max(128).describe("The agent-side tool's own name"),
    // `input` sits one level inside the args.
    input: cappedJson(MAX_JSON_DEPTH - 1)
      .optional()
      .describe("The input the agent ran it with (shown to subscribers)"),
  }),
  replaySafe: false,
});
