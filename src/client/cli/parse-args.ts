/**
 * `toolwire` command lines to commands. Options before a command are global;
 * `run` takes its own options before the tool name and the tool's arguments after it
 * (`--key value`, `--key=value`, a bare `--flag`, or `--args '<json>'`), so a tool
 * argument may share a name with a CLI option (`toolwire run web_fetch --url …`).
 */
import type { StreamKind } from "../endpoints.ts";

export type CommandName = "run" | "watch" | "result" | "tools";
export const COMMANDS: readonly CommandName[] = ["run", "watch", "result", "tools"];

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
      sandbox?: string;
      detach: boolean;
      transport: StreamKind;
    }
  | { kind: "watch"; id: string; transport: StreamKind }
  | { kind: "watchRun"; runId: string }
  | { kind: "result"; id: string; waitSeconds?: number; json: boolean }
  | { kind: "tools"; json: boolean };

export type RunCommand = Extract<CliCommand, { kind: "run" }>;

export interface ParsedCommandLine {
  connection: Connection;
  command: CliCommand;
}

/** A mistake in the command line: exit code 2, with the message and a pointer to help. */
export class UsageError extends Error {
  readonly topic: CommandName | undefined;
  constructor(message: string, topic?: CommandName) {
    super(message);
    this.name = "UsageError";
    this.topic = topic;
  }
}

interface Token {
  name: string;
  value: RawArg;
}

/**
 * Parses `process.argv.slice(2)`.
 *
 * @example
 * parseArgs(["run", "bash", "--command", "npm test"]).command
 * // { kind: "run", tool: "bash", args: { command: "npm test" }, detach: false, transport: "socket" }
 */
export function parseArgs(argv: readonly string[]): ParsedCommandLine {
  const connection: Connection = {};
  const rest = [...argv];
  let help = false;
  // Global options, up to the command name.
  while (rest.length > 0 && rest[0]?.startsWith("-")) {
    const option = takeOption(rest);
    if (option.name === "help" || option.name === "h") help = true;
    else if (option.name === "version") return { connection, command: { kind: "version" } };
    else applyConnection(connection, option, undefined);
  }
  const name = rest.shift();
  if (name === undefined || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic !== undefined && !isCommand(topic))
      throw new UsageError(`Unknown command "${topic}".`);
    return { connection, command: topic ? { kind: "help", topic } : { kind: "help" } };
  }
  if (!isCommand(name)) {
    throw new UsageError(`Unknown command "${name}". Commands: ${COMMANDS.join(", ")}.`);
  }
  if (help) return { connection, command: { kind: "help", topic: name } };
  const command = parseCommand(name, rest, connection);
  return { connection, command };
}

function parseCommand(name: CommandName, rest: string[], connection: Connection): CliCommand {
  switch (name) {
    case "run":
      return parseRun(rest, connection);
    case "watch": {
      const { positional, options } = split(rest);
      if (options.has("help")) return { kind: "help", topic: name };
      applyAll(connection, options, name, ["sse", "run"]);
      const run = options.get("run");
      if (run !== undefined) {
        if (run === true || run === "") throw new UsageError("--run needs a run id.", name);
        if (positional.length > 0) {
          throw new UsageError("watch takes an invocation id or --run <runId>, not both.", name);
        }
        return { kind: "watchRun", runId: run };
      }
      return {
        kind: "watch",
        id: onePositional(positional, "an invocation id", name),
        transport: transportOf(options),
      };
    }
    case "result": {
      const { positional, options } = split(rest);
      if (options.has("help")) return { kind: "help", topic: name };
      applyAll(connection, options, name, ["wait", "json"]);
      const id = onePositional(positional, "an invocation id", name);
      const wait = options.get("wait");
      const command: CliCommand = { kind: "result", id, json: options.get("json") === true };
      if (wait !== undefined) command.waitSeconds = nonNegativeNumber(wait, "--wait", name);
      return command;
    }
    case "tools": {
      const { positional, options } = split(rest);
      if (options.has("help")) return { kind: "help", topic: name };
      applyAll(connection, options, name, ["json"]);
      if (positional.length > 0)
        throw new UsageError(`tools takes no arguments, got "${positional[0]}".`, name);
      return { kind: "tools", json: options.get("json") === true };
    }
  }
}

function parseRun(rest: string[], connection: Connection): CliCommand {
  const command: RunCommand = {
    kind: "run",
    tool: "",
    args: {},
    detach: false,
    transport: "socket",
  };
  // Run options come before the tool name.
  while (rest.length > 0 && rest[0]?.startsWith("-")) {
    const option = takeOption(rest);
    if (option.name === "help" || option.name === "h") return { kind: "help", topic: "run" };
    if (option.name === "detach") command.detach = flag(option, "run");
    else if (option.name === "sse") command.transport = flag(option, "run") ? "sse" : "socket";
    else if (option.name === "id") command.toolCallId = needValue(option, "run");
    else if (option.name === "sandbox") command.sandbox = needValue(option, "run");
    else applyConnection(connection, option, "run");
  }
  const tool = rest.shift();
  if (tool === undefined)
    throw new UsageError("run needs a tool name, e.g. toolwire run bash --command 'ls'.", "run");
  command.tool = tool;
  while (rest.length > 0) {
    const next = rest[0] ?? "";
    if (!next.startsWith("--") || next === "--") {
      throw new UsageError(
        `Unexpected "${next}": tool arguments are --name value pairs (or --args '<json>').`,
        "run",
      );
    }
    const option = takeOption(rest, true);
    if (option.name === "help") return { kind: "help", topic: "run" };
    if (option.name === "args") command.argsJson = needValue(option, "run");
    else command.args[camelCase(option.name)] = option.value;
  }
  return command;
}

/** CLI options that never take a value (tool arguments may: they follow the tool name). */
const FLAGS = new Set(["help", "h", "version", "detach", "sse", "json"]);

function takeOption(rest: string[], toolArg = false): Token {
  const raw = rest.shift() ?? "";
  const body = raw.replace(/^--?/, "");
  const eq = body.indexOf("=");
  if (eq !== -1) return { name: body.slice(0, eq), value: body.slice(eq + 1) };
  const next = rest[0];
  if (next !== undefined && !next.startsWith("--") && (toolArg || !FLAGS.has(body))) {
    rest.shift();
    return { name: body, value: next };
  }
  return { name: body, value: true };
}

function split(rest: string[]): { positional: string[]; options: Map<string, RawArg> } {
  const positional: string[] = [];
  const options = new Map<string, RawArg>();
  while (rest.length > 0) {
    const next = rest[0] ?? "";
    if (!next.startsWith("-")) {
      positional.push(next);
      rest.shift();
      continue;
    }
    const option = takeOption(rest);
    options.set(option.name === "h" ? "help" : option.name, option.value);
  }
  return { positional, options };
}

function applyAll(
  connection: Connection,
  options: Map<string, RawArg>,
  command: CommandName,
  own: string[],
): void {
  for (const [name, value] of options) {
    if (own.includes(name)) continue;
    applyConnection(connection, { name, value }, command);
  }
}

function applyConnection(
  connection: Connection,
  option: Token,
  command: CommandName | undefined,
): void {
  if (option.name === "url") connection.url = needValue(option, command);
  else if (option.name === "token") connection.token = needValue(option, command);
  else throw new UsageError(`Unknown option --${option.name}.`, command);
}

function needValue(option: Token, command: CommandName | undefined): string {
  if (option.value === true || option.value === "") {
    throw new UsageError(`--${option.name} needs a value.`, command);
  }
  return option.value;
}

function flag(option: Token, command: CommandName): boolean {
  if (option.value === true) return true;
  throw new UsageError(
    `--${option.name} is a flag and takes no value (got "${option.value}").`,
    command,
  );
}

function transportOf(options: Map<string, RawArg>): StreamKind {
  return options.get("sse") === true ? "sse" : "socket";
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
