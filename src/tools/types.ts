import type { JsonValue } from "../core/chord/types.ts";
import type { OutputPolicy, ToolOutput } from "../core/output/types.ts";

/** What a tool may use besides its sink. Supplied by the Durable Object. */
export interface ToolContext {
  toolCallId: string;
  runId: string;
  turnId: string;
  /** Durable memo: written together with an output checkpoint in one transaction. */
  setMemo(name: string, value: JsonValue): void;
  getMemo(name: string): JsonValue | undefined;
  /** Worker environment (bindings, vars, secrets). */
  env: Env;
  /** Name of the sandbox this call was routed to. */
  sandbox: string;
}

/** What one run of a tool gets: its parsed params, its sink, an abort signal, its context. */
export interface ToolRun<P> {
  params: P;
  /** The sink the tool writes its output to. */
  out: ToolOutput;
  /** Aborts when the call is cancelled or settles another way. */
  signal: AbortSignal;
  context: ToolContext;
}

/** How one stretch of a stretched tool ended: its work finished, or the stretch let go of it. */
export type StretchEnd = "exited" | "parked";

/**
 * A tool whose work runs outside the Durable Object and that the DO follows in bounded
 * stretches (docs/decisions/046): a stretch reads for a while and parks, the alarm starts
 * the next one, which rejoins; after eviction or a restart the next stretch rejoins the
 * same way.
 */
export interface ToolStretch<P> {
  /** One stretch: starts the work, or with `reattach` rejoins it, and reads it for a while. */
  run(run: ToolRun<P> & { reattach: boolean }): Promise<StretchEnd>;
  /** Stops the work while no stretch reads it (a cancel between stretches). */
  kill(context: ToolContext): Promise<void>;
}

/**
 * A tool: JSON Schema for its parameters, how its output is bounded, and how it runs:
 * `execute` (runs to its end in the DO), `stretch` (followed in stretches), or neither
 * (the agent-side `external` tool, whose output comes from the producer API).
 * `execute` returns nothing: what it wrote is the result; a thrown error marks the
 * call failed and its message is appended to what was already written.
 */
export interface ToolDefinition<P = Record<string, JsonValue>> {
  name: string;
  description: string;
  /** JSON Schema of the parameters (served by `GET /v1/tools`). */
  parameters: JsonValue;
  /** Parses and validates raw args; throws a clear error on bad input. */
  parse(args: unknown): P;
  output: OutputPolicy;
  /** The policy of one call whose args choose it; absent: `output` for every call. */
  outputFor?(params: P): OutputPolicy;
  /** Safe to execute again after a crash, starting from the checkpointed output. */
  replaySafe: boolean;
  /** Runs on a sandbox host: the call is created only if the host answers. */
  sandbox: boolean;
  execute?(run: ToolRun<P>): Promise<void>;
  stretch?: ToolStretch<P>;
}
