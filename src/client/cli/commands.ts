import { NEW_SANDBOX } from "../../protocol/index.ts";
import {
  type CallEnding,
  callEnding,
  wholeOutputCommand,
  withoutModelFooter,
} from "../call-story.ts";
import { ToolwireError } from "../errors.ts";
import { type ToolInfo, ToolwireClient } from "../http-client.ts";
import { SandboxesClient } from "../sandboxes.ts";
import type { Subscription, SubscriptionOutcome } from "../subscription.ts";
import { describeTruncation, formatBytes } from "../truncation-notice.ts";
import { type AttachEnd, attach, clampSize, typistName } from "./attach-command.ts";
import type { CliProcess } from "./cli-process.ts";
import { helpText } from "./help.ts";
import { LivePrinter } from "./live-printer.ts";
import { printWholeOutput } from "./output-command.ts";
import {
  type CliCommand,
  type Connection,
  parseArgs,
  type RunCommand,
  UsageError,
} from "./parse-args.ts";
import { runSandbox } from "./sandbox-command.ts";
import { TerminalFilter } from "./terminal-filter.ts";
import { toolArgs } from "./tool-args.ts";
import { watchRun } from "./watch-run.ts";

/** A whole text made safe for a terminal (see TerminalFilter). */
function forTerminal(text: string): string {
  const filter = new TerminalFilter();
  return filter.push(text) + filter.end();
}

/**
 * The CLI's exit statuses (decision 260). A failed command exits with its own status
 * (1–255, so a command's 2, 3 or 4 reads like the CLI's own: the message on stderr tells
 * them apart); a tool that failed without one exits 1.
 */
export const EXIT = {
  ok: 0,
  toolError: 1,
  usage: 2,
  connection: 3,
  running: 4,
  /** The command was stopped by its `timeout` or `idleTimeout` (as GNU timeout's 124). */
  timeout: 124,
  /** The call was cancelled (Ctrl-C, `kill`, a sandbox removed), or left running by a second Ctrl-C. */
  interrupted: 130,
} as const;

/** How a followed call ended, from its last state and its record (null when unreadable). */
async function endingOf(client: ToolwireClient, id: string, outcome: SubscriptionOutcome) {
  const info = await client.get(id).catch(() => null);
  const ending = callEnding({
    isError: outcome.end?.isError,
    cancelled: info?.cancelled,
    details: outcome.state?.details,
    args: info?.args,
  });
  return { ending, info };
}

/** The exit status of a settled call: what its ending says (decision 260). */
function endStatus(ending: CallEnding): number {
  switch (ending.kind) {
    case "done":
      return EXIT.ok;
    case "cancelled":
      return EXIT.interrupted;
    case "timedout":
      return EXIT.timeout;
    case "failed":
      return ending.exitCode ?? EXIT.toolError;
  }
}

const DEFAULT_URL = "http://127.0.0.1:8787";

export type { CliProcess } from "./cli-process.ts";

/**
 * Runs one `toolwire` command line and returns its exit status.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), nodeProcess);
 */
export async function runCli(argv: readonly string[], proc: CliProcess): Promise<number> {
  let command: CliCommand;
  let connection: Connection;
  try {
    ({ command, connection } = parseArgs(argv));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return usage(proc, error);
  }
  if (command.kind === "help") {
    proc.stdout.write(`${helpText(command.topic)}\n`);
    return EXIT.ok;
  }
  if (command.kind === "version") {
    proc.stdout.write(`toolwire ${proc.version}\n`);
    return EXIT.ok;
  }
  try {
    const client = clientFor(connection, proc.env);
    switch (command.kind) {
      case "run":
        return await run(client, command, proc, () => {
          const token = connection.token ?? proc.env.TOOLWIRE_TOKEN ?? "";
          return new SandboxesClient({ baseUrl: client.baseUrl, token });
        });
      case "watch": {
        const { tool, createdAt } = await client.get(command.id);
        const retain = retainOf(await client.tools(), tool);
        // Elapsed time counts from the call's creation, not from when this watch began.
        return await follow(client, command.id, proc, {
          sub: client.subscribe(command.id, { transport: command.transport }),
          cancel: null,
          retain,
          startedAt: createdAt ?? Date.now(),
          timedByCall: true,
        });
      }
      case "attach":
        return await attachCommand(client, command.id, command.as, proc);
      case "watchRun": {
        const token = connection.token ?? proc.env.TOOLWIRE_TOKEN ?? "";
        const end = await watchRun(client.baseUrl, token, command.runId, proc);
        return end.kind === "failed" ? failure(proc, end.error) : EXIT.interrupted;
      }
      case "link":
        proc.stdout.write(`${(await client.links(command.id)).viewUrl}\n`);
        return EXIT.ok;
      case "output":
        await printWholeOutput(client, command.id, proc);
        return EXIT.ok;
      case "linkRun":
        proc.stdout.write(`${(await client.runLinks(command.runId)).runViewUrl}\n`);
        return EXIT.ok;
      case "result":
        return await result(client, command.id, command.waitSeconds, command.json, proc);
      case "tools":
        return await tools(client, command.json, proc);
      case "sandbox": {
        const token = connection.token ?? proc.env.TOOLWIRE_TOKEN ?? "";
        const sandboxes = new SandboxesClient({ baseUrl: client.baseUrl, token });
        return await runSandbox(sandboxes, command.sandbox, proc);
      }
    }
  } catch (error) {
    if (error instanceof UsageError) return usage(proc, error);
    if (error instanceof ToolwireError) return failure(proc, error);
    throw error;
  }
}

function clientFor(
  connection: Connection,
  env: Record<string, string | undefined>,
): ToolwireClient {
  const baseUrl = connection.url ?? env.TOOLWIRE_URL ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(
      `"${baseUrl}" is not a URL; set TOOLWIRE_URL or --url to e.g. ${DEFAULT_URL}.`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(
      `"${baseUrl}" is not an http(s) URL; set TOOLWIRE_URL or --url to e.g. ${DEFAULT_URL}.`,
    );
  }
  const token = connection.token ?? env.TOOLWIRE_TOKEN;
  if (!token) {
    throw new ToolwireError(
      "unauthorized",
      "No API token: set TOOLWIRE_TOKEN (for a local Worker, the API_TOKEN in .dev.vars) or pass --token.",
      401,
    );
  }
  return new ToolwireClient({ baseUrl, token });
}

async function run(
  client: ToolwireClient,
  command: RunCommand,
  proc: CliProcess,
  sandboxes: () => SandboxesClient,
): Promise<number> {
  const known = await client.tools();
  const tool = known.find((t) => t.name === command.tool);
  if (!tool) {
    throw new UsageError(
      `Unknown tool "${command.tool}". Tools: ${known
        .filter((t) => !t.example)
        .map((t) => t.name)
        .join(", ")}.`,
      "run",
    );
  }
  const args = toolArgs(command.args, command.argsJson, tool.parameters);
  // `run bash --tty` at a person's terminal is interactive: the call gets their size
  // (unless --cols/--rows say otherwise) and they are attached to it (decision 191).
  const interactive =
    command.tool === "bash" && args.tty === true && proc.keyboard !== undefined && !command.detach;
  if (interactive && proc.keyboard) {
    const size = clampSize(proc.keyboard.size());
    args.cols ??= size.cols;
    args.rows ??= size.rows;
  }
  const sandbox =
    command.sandbox === NEW_SANDBOX ? await newSandbox(sandboxes(), proc) : command.sandbox;
  const created = await client.createInvocation({
    tool: command.tool,
    args,
    ...(command.toolCallId ? { toolCallId: command.toolCallId } : {}),
    ...(command.runId ? { runId: command.runId } : {}),
    ...(sandbox ? { sandbox } : {}),
  });
  if (command.detach) {
    proc.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
    return EXIT.ok;
  }
  if (proc.stderr.isTTY) {
    proc.stderr.write(`Viewer: ${created.viewUrl}\n`);
    if (created.runViewUrl) proc.stderr.write(`Run: ${created.runViewUrl}\n`);
  }
  if (interactive) return attachCommand(client, created.id, command.as, proc);
  // By id with the API token: the subscribe token in `created` expires after an hour,
  // and a reconnect after that would be refused while the command still runs.
  return follow(client, created.id, proc, {
    sub: client.subscribe(created.id, { transport: command.transport }),
    cancel: () => client.cancel(created.id),
    retain: tool.output?.retain,
    startedAt: Date.now(),
    timedByCall: false,
  });
}

/**
 * `toolwire attach <id>`: the person's terminal attached to a tty call until they detach
 * (exit 0, the call left running) or it ends (its own exit status, as `watch`).
 */
async function attachCommand(
  client: ToolwireClient,
  id: string,
  as: string | undefined,
  proc: CliProcess,
): Promise<number> {
  const keyboard = proc.keyboard;
  if (!keyboard) {
    throw new UsageError(
      "attach needs a terminal (stdin and stdout): use toolwire watch to follow a call from a pipe.",
      "attach",
    );
  }
  const name = typistName(as, proc.env);
  const sub = client.subscribe(id);
  let end: AttachEnd;
  try {
    end = await attach(client, id, name, proc, keyboard, sub);
  } catch (error) {
    sub.close();
    throw error;
  }
  if (end.kind === "failed") {
    sub.close();
    return failure(proc, end.error);
  }
  if (end.kind === "detached") {
    sub.close();
    proc.stderr.write(`[toolwire] detached; ${id} runs on (toolwire attach ${id} to come back)\n`);
    return EXIT.ok;
  }
  const { ending } = await endingOf(client, id, await sub.finished);
  proc.stderr.write(`[toolwire] ${id} ${ending.words}\n`);
  return endStatus(ending);
}

/**
 * `run --sandbox new`: a sandbox made for this call (the Worker's defaults), its id
 * printed to stderr as `Sandbox: sbx_…` so that later calls can name it.
 */
async function newSandbox(sandboxes: SandboxesClient, proc: CliProcess): Promise<string> {
  const made = await sandboxes.create();
  proc.stderr.write(`Sandbox: ${made.id}\n`);
  return made.id;
}

/** Which end of its output a tool keeps (how a live printer reads a window that stops moving). */
function retainOf(known: ToolInfo[], name: string): "head" | "tail" | undefined {
  return known.find((t) => t.name === name)?.output?.retain;
}

/** How `follow` reads a call: its subscription, how to cancel it, its policy and start. */
interface Following {
  sub: Subscription;
  cancel: (() => Promise<unknown>) | null;
  retain: "head" | "tail" | undefined;
  startedAt: number;
  /** Time the summary to the call's own settledAt (a watch, timed from its createdAt). */
  timedByCall: boolean;
}

/**
 * Prints call `id` until it ends; the first Ctrl-C calls `cancel` (if any), the second
 * leaves it running. Once settled, the call's own record says whether it was cancelled.
 */
async function follow(
  client: ToolwireClient,
  id: string,
  proc: CliProcess,
  { sub, cancel, retain, startedAt, timedByCall }: Following,
): Promise<number> {
  const printer = new LivePrinter(proc, startedAt, retain);
  sub.onChange((s) => printer.update(s));
  let interrupts = 0;
  let leave: () => void = () => {};
  const interrupted = new Promise<"interrupted">((resolve) => {
    leave = () => resolve("interrupted");
  });
  const stopListening = proc.onInterrupt(() => {
    interrupts++;
    if (cancel && interrupts === 1) {
      proc.stderr.write("\n[toolwire] cancelling… (Ctrl-C again to leave it running)\n");
      cancel().catch((error: unknown) => {
        proc.stderr.write(`[toolwire] could not cancel: ${(error as Error).message}\n`);
      });
      return;
    }
    leave();
  });
  const outcome: SubscriptionOutcome | "interrupted" = await Promise.race([
    sub.finished,
    interrupted,
  ]);
  stopListening();
  if (outcome === "interrupted") {
    sub.close();
    printer.finish(await sub.finished, id, null);
    proc.stderr.write(`[toolwire] left ${id} running; follow it with: toolwire watch ${id}\n`);
    return EXIT.interrupted;
  }
  if (outcome.status !== "settled") {
    printer.finish(outcome, id, null);
    if (outcome.status === "failed" && outcome.error) return failure(proc, outcome.error);
    return EXIT.connection;
  }
  const { ending, info } = await endingOf(client, id, outcome);
  printer.finish(outcome, id, ending, timedByCall ? info?.settledAt : undefined);
  return endStatus(ending);
}

async function result(
  client: ToolwireClient,
  id: string,
  waitSeconds: number | undefined,
  json: boolean,
  proc: CliProcess,
): Promise<number> {
  const deadline =
    waitSeconds === undefined ? Number.POSITIVE_INFINITY : Date.now() + waitSeconds * 1000;
  for (;;) {
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    const poll = await client.result(id, { wait: Math.min(30, Math.ceil(left)) });
    if (poll.status === "settled") {
      const r = poll.result;
      const info = await client.get(id);
      const ending = callEnding({
        isError: r.isError,
        cancelled: info.cancelled,
        details: r.details,
        args: info.args,
      });
      if (json) proc.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      else {
        for (const block of r.content) {
          if (block.type === "text") {
            const people = withoutModelFooter(block.text);
            const text = proc.stdout.isTTY ? forTerminal(people) : people;
            proc.stdout.write(text.endsWith("\n") || text === "" ? text : `${text}\n`);
          } else
            proc.stderr.write(
              `[toolwire] image (${block.mimeType}, ${formatBytes(block.data.length)} of base64)\n`,
            );
        }
        const banner = describeTruncation(r.truncation, undefined, wholeOutputCommand(id));
        if (banner) proc.stderr.write(`[toolwire] ${banner}\n`);
        if (ending.kind !== "done") proc.stderr.write(`[toolwire] ${ending.words}\n`);
      }
      return endStatus(ending);
    }
    if (Date.now() >= deadline) {
      proc.stderr.write(
        `toolwire: ${id} is still running; try again later or run: toolwire watch ${id}\n`,
      );
      return EXIT.running;
    }
  }
}

async function tools(client: ToolwireClient, json: boolean, proc: CliProcess): Promise<number> {
  const list = await client.tools();
  if (json) {
    proc.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return EXIT.ok;
  }
  for (const tool of list) proc.stdout.write(describeTool(tool));
  return EXIT.ok;
}

/** One tool for people: name, first line of its description, its parameters. */
function describeTool(tool: ToolInfo): string {
  const schema = tool.parameters as {
    properties?: Record<string, { type?: string; description?: string }>;
    required?: string[];
  };
  const lines = [`${tool.name}  ${(tool.description ?? "").split("\n")[0]}`];
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    const required = schema.required?.includes(name) ? "" : " (optional)";
    const type = prop.type ? ` <${prop.type}>` : "";
    lines.push(`    --${name}${type}${required}${prop.description ? `  ${prop.description}` : ""}`);
  }
  return `${lines.join("\n")}\n\n`;
}

function usage(proc: CliProcess, error: UsageError): number {
  const more = error.topic ? `toolwire ${error.topic} --help` : "toolwire --help";
  proc.stderr.write(`toolwire: ${error.message}\nRun "${more}" for usage.\n`);
  return EXIT.usage;
}

/** Server answers that mean the command line named something wrong, not that the connection failed. */
const USAGE_CODES = new Set(["bad_request", "not_found", "conflict", "too_large"]);

function failure(proc: CliProcess, error: ToolwireError): number {
  const hint = error.message.includes("TOOLWIRE_")
    ? ""
    : error.code === "unauthorized" || error.code === "forbidden"
      ? " Check TOOLWIRE_TOKEN (or --token)."
      : error.code === "unreachable" || error.code === "bad_response"
        ? " Check TOOLWIRE_URL (or --url)."
        : "";
  const sentence = /[.!?)]$/.test(error.message) ? error.message : `${error.message}.`;
  proc.stderr.write(`toolwire: ${sentence}${hint}\n`);
  return USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.connection;
}
