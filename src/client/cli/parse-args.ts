/**
 * `toolwire` command lines to commands, tokenized by `node:util` `parseArgs`. Options
 * before a command are global; `run` takes its own options before the tool name and
 * the tool's arguments after it (`--key value`, `--key=value`, a bare `--flag`, or
 * `--args '<json>'`), so a tool argument may share a name with a CLI option
 * (`toolwire run web_fetch --url …`). `--` ends a command's options.
 */
import { parseArgs as tokenize } from "node:util";
import type { StreamKind } from "../endpoints.ts";
import { parseSandboxArgs, type SandboxAction } from "./sandbox-command.ts";
import { COMMANDS, type CommandName, UsageError } from "./usage.ts";

export { COMMANDS, type CommandName, UsageError } from "./usage.ts";

/** A tool argument as typed: a string, or `true` for a bare flag. */
export type RawArg = string | true;

export interface Connection {
  url?: string;
  token?: string;
}

export type CliCommand =
  | { kind: "help"; topic?: CommandName }
  | { kind: "version" }
  | {
      kind: "run";
      tool: string;
      args: Record<string, RawArg>;
      argsJson?: string;
      toolCallId?: string;
      runId?: string;
      sandbox?: string;
      detach: boolean;
      transport: StreamKind;
      /** `--as NAME`: who a person types as when `run bash --tty` attaches them. */
      as?: string;
    }
  | { kind: "watch"; id: string; transport: StreamKind }
  | { kind: "watchRun"; runId: string }
  | { kind: "attach"; id: string; as?: string }
  | { kind: "link"; id: string }
  | { kind: "output"; id: string }
  | { kind: "linkRun"; runId: string }
  | { kind: "result"; id: string; waitSeconds?: number; json: boolean }
  | { kind: "tools"; json: boolean }
  | { kind: "sandbox"; sandbox: SandboxAction };

export type RunCommand = Extract<CliCommand, { kind: "run" }>;

interface ParsedCommandLine {
  connection: Connection;
  command: CliCommand;
}

type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string }>;
type OptionValues = Map<string, RawArg>;

const CONNECTION_OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies OptionSpec;

/** The options each part of a command line takes (tool arguments are any `--name`). */
const OPTIONS = {
  global: { ...CONNECTION_OPTIONS, version: { type: "boolean" } },
  run: {
    ...CONNECTION_OPTIONS,
    id: { type: "string" },
    "run-id": { type: "string" },
    sandbox: { type: "string" },
    detach: { type: "boolean" },
    sse: { type: "boolean" },
    as: { type: "string" },
  },
  watch: { ...CONNECTION_OPTIONS, sse: { type: "boolean" }, run: { type: "string" } },
  attach: { ...CONNECTION_OPTIONS, as: { type: "string" } },
  link: { ...CONNECTION_OPTIONS, run: { type: "string" } },
  output: CONNECTION_OPTIONS,
  result: { ...CONNECTION_OPTIONS, wait: { type: "string" }, json: { type: "boolean" } },
  tools: { ...CONNECTION_OPTIONS, json: { type: "boolean" } },
} as const satisfies Record<string, OptionSpec>;

/**
 * Parses `process.argv.slice(2)`.
 *
 * @example
 * parseArgs(["run", "bash", "--command", "npm test"]).command
 * // { kind: "run", tool: "bash", args: { command: "npm test" }, detach: false, transport: "socket" }
 */
export function parseArgs(argv: readonly string[]): ParsedCommandLine {
  const connection: Connection = {};
  const global = readOptions(argv, OPTIONS.global, undefined, true);
  if (global.values.has("version")) return { connection, command: { kind: "version" } };
  applyConnection(connection, global.values);
  const [name] = global.positionals;
  const rest = argv.slice(global.next);
  if (name === undefined || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic !== undefined && !isCommand(topic))
      throw new UsageError(`Unknown command "${topic}".`);
    return { connection, command: topic ? { kind: "help", topic } : { kind: "help" } };
  }
  if (!isCommand(name)) {
    throw new UsageError(`Unknown command "${name}". Commands: ${COMMANDS.join(", ")}.`);
  }
  if (global.values.has("help")) return { connection, command: { kind: "help", topic: name } };
  if (name === "run") return { connection, command: parseRun(rest, connection) };
  if (name === "sandbox") {
    if (rest.includes("--help") || rest.includes("-h")) {
      return { connection, command: { kind: "help", topic: name } };
    }
    return { connection, command: { kind: "sandbox", sandbox: parseSandboxArgs(rest) } };
  }
  const { values, positionals } = readOptions(rest, OPTIONS[name], name, false);
  if (values.has("help")) return { connection, command: { kind: "help", topic: name } };
  applyConnection(connection, values);
  return { connection, command: parseCommand(name, values, positionals) };
}

function parseCommand(
  name: Exclude<CommandName, "run" | "sandbox">,
  options: OptionValues,
  positional: string[],
): CliCommand {
  switch (name) {
    case "watch": {
      const runId = options.get("run");
      if (runId !== undefined) {
        if (typeof runId !== "string" || runId === "")
          throw new UsageError("--run needs a run id.", name);
        if (positional.length > 0) {
          throw new UsageError("watch takes an invocation id or --run <runId>, not both.", name);
        }
        return { kind: "watchRun", runId };
      }
      return {
        kind: "watch",
        id: onePositional(positional, "an invocation id", name),
        transport: options.has("sse") ? "sse" : "socket",
      };
    }
    case "link": {
      const runId = options.get("run");
      if (runId !== undefined) {
        if (typeof runId !== "string" || runId === "")
          throw new UsageError("--run needs a run id.", name);
        if (positional.length > 0) {
          throw new UsageError("link takes an invocation id or --run <runId>, not both.", name);
        }
        return { kind: "linkRun", runId };
      }
      return { kind: "link", id: onePositional(positional, "an invocation id", name) };
    }
    case "attach": {
      const id = onePositional(positional, "an invocation id", name);
      const as = options.get("as");
      return typeof as === "string" ? { kind: "attach", id, as } : { kind: "attach", id };
    }
    case "output":
      return { kind: "output", id: onePositional(positional, "an invocation id", name) };
    case "result": {
      const id = onePositional(positional, "an invocation id", name);
      const wait = options.get("wait");
      const command: CliCommand = { kind: "result", id, json: options.has("json") };
      if (wait !== undefined) command.waitSeconds = nonNegativeNumber(wait, "--wait", name);
      return command;
    }
    case "tools":
      if (positional.length > 0)
        throw new UsageError(`tools takes no arguments, got "${positional[0]}".`, name);
      return { kind: "tools", json: options.has("json") };
  }
}

function parseRun(rest: readonly string[], connection: Connection): CliCommand {
  // Run options come before the tool name; everything after it is the tool's.
  const { values, positionals, next } = readOptions(rest, OPTIONS.run, "run", true);
  if (values.has("help")) return { kind: "help", topic: "run" };
  applyConnection(connection, values);
  const [tool] = positionals;
  if (tool === undefined)
    throw new UsageError("run needs a tool name, e.g. toolwire run bash --command 'ls'.", "run");
  const command: RunCommand = {
    kind: "run",
    tool,
    args: {},
    detach: values.has("detach"),
    transport: values.has("sse") ? "sse" : "socket",
  };
  const id = values.get("id");
  const sandbox = values.get("sandbox");
  const runId = values.get("run-id");
  if (typeof id === "string") command.toolCallId = id;
  if (typeof runId === "string") command.runId = runId;
  if (typeof sandbox === "string") command.sandbox = sandbox;
  const as = values.get("as");
  if (typeof as === "string") command.as = as;
  const toolArgs = readToolArgs(rest.slice(next));
  if (toolArgs === "help") return { kind: "help", topic: "run" };
  command.args = toolArgs.pairs;
  if (toolArgs.argsJson !== undefined) command.argsJson = toolArgs.argsJson;
  return command;
}

/**
 * Reads the options `spec` names, refusing any other, a flag given a value and an
 * option left without one. With `untilPositional`, stops at the first positional
 * argument (a command or tool name) and says where the rest begins.
 */
function readOptions(
  args: readonly string[],
  spec: OptionSpec,
  command: CommandName | undefined,
  untilPositional: boolean,
): { values: OptionValues; positionals: string[]; next: number } {
  const { tokens } = tokenize({
    args: [...args],
    options: spec,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: OptionValues = new Map();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      positionals.push(token.value);
      if (untilPositional) return { values, positionals, next: token.index + 1 };
      continue;
    }
    const option = spec[token.name];
    if (option === undefined) throw new UsageError(`Unknown option ${token.rawName}.`, command);
    if (option.type === "boolean") {
      if (token.value !== undefined) {
        throw new UsageError(
          `--${token.name} is a flag and takes no value (got "${token.value}").`,
          command,
        );
      }
      values.set(token.name, true);
      continue;
    }
    // parseArgs hands a string option the next argument whatever it is; a `--name` is
    // another option, not a value.
    const value = token.value;
    if (value === undefined || value === "" || (!token.inlineValue && value.startsWith("--"))) {
      throw new UsageError(`--${token.name} needs a value.`, command);
    }
    values.set(token.name, value);
  }
  return { values, positionals, next: args.length };
}

/**
 * Tool arguments, whose names only the server's schema knows. `parseArgs` reads an
 * unknown `--name` as a bare flag, so a value is paired here: a `--name` with no
 * `=value` takes the next argument unless that is another `--option` (so `--offset -5`
 * is a value and `--a --b` two flags).
 */
function readToolArgs(
  args: readonly string[],
): { pairs: Record<string, RawArg>; argsJson?: string } | "help" {
  const { tokens } = tokenize({
    args: [...args],
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const pairs: Record<string, RawArg> = {};
  let argsJson: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === undefined) break;
    if (token.kind !== "option" || !token.rawName.startsWith("--")) {
      throw new UsageError(
        `Unexpected "${args[token.index]}": tool arguments are --name value pairs (or --args '<json>').`,
        "run",
      );
    }
    let value: RawArg = token.value ?? true;
    const next = args[token.index + 1];
    if (token.value === undefined && next !== undefined && !next.startsWith("--")) {
      value = next;
      // `-abc` is several tokens of one argument: skip all of them.
      while (tokens[i + 1]?.index === token.index + 1) i++;
    }
    if (token.name === "help") return "help";
    if (token.name === "args") {
      if (value === true || value === "") throw new UsageError("--args needs a value.", "run");
      argsJson = value;
    } else {
      pairs[camelCase(token.name)] = value;
    }
  }
  return argsJson === undefined ? { pairs } : { pairs, argsJson };
}

function applyConnection(connection: Connection, values: OptionValues): void {
  const url = values.get("url");
  const token = values.get("token");
  if (typeof url === "string") connection.url = url;
  if (typeof token === "string") connection.token = token;
}

function onePositional(positional: string[], what: string, command: CommandName): string {
  if (positional.length === 0) throw new UsageError(`${command} needs ${what}.`, command);
  if (positional.length > 1)
    throw new UsageError(`${command} takes one argument, got ${positional.length}.`, command);
  return positional[0] as string;
}

function nonNegativeNumber(value: RawArg, name: string, command: CommandName): number {
  const n = value === true ? Number.NaN : Number(value);
  if (!Number.isFinite(n) || n < 0) {
    throw new UsageError(
      `${name} must be a number of seconds ≥ 0, got "${value === true ? "" : value}".`,
      command,
    );
  }
  return n;
}

function isCommand(name: string): name is CommandName {
  return (COMMANDS as readonly string[]).includes(name);
}

/** `ignore-case` → `ignoreCase` (tool parameters are camelCase). */
function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
