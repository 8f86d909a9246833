/**
 * `toolwire/pi`: a pi-coding-agent extension that runs pi's seven tools (bash, read,
 * edit, write, grep, find, ls) in a Toolwire sandbox, with bash's steering arguments and
 * the background-job tools jobs, job_output and kill, and expose_port (a preview URL of a
 * server the model started). Load it with `pi -e <this file>`
 * and set `TOOLWIRE_URL`, `TOOLWIRE_TOKEN`; each pi session gets a sandbox of its own
 * (`TOOLWIRE_SANDBOX` pins one; `default` is the shared workspace). Each of
 * pi's tools keeps pi's own parameter schema (bash's gains Toolwire's arguments) and
 * built-in renderers; only where it runs changes (docs/pi.md). `/toolwire` names the
 * sandbox and the run view; `/toolwire delete` deletes the session's sandbox.
 *
 * Depends on the Toolwire client and pi's packages (peer dependencies of this entry).
 */
import {
  createBashToolDefinition,
  createEditToolDefinition,
  createFindToolDefinition,
  createGrepToolDefinition,
  createLsToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
  type ExtensionAPI,
  type ExtensionContext,
} from "@mariozechner/pi-coding-agent";
import type { JsonValue } from "../client/index.ts";
import { OUTPUT_BYTES, OUTPUT_LINES } from "../protocol/index.ts";
import { EXPOSE_PORT_TOOL } from "./preview-tool.ts";
import { type CallLinks, runRemote } from "./remote-call.ts";
import { SessionSandbox } from "./session-sandbox.ts";
import { type PiToolwireSettings, settingsFromEnv } from "./settings.ts";
import { bashParameters, type JsonSchemaObject, STEERING_TOOLS } from "./steering-tools.ts";

export { type PiDetails, type PiTruncation, piDetails } from "./details.ts";
export { type PiToolResult, type RemoteCall, runRemote } from "./remote-call.ts";
export { type PiToolwireSettings, settingsFromEnv } from "./settings.ts";

/** What each tool does, said where it runs (the description the model reads). */
const DESCRIPTIONS: Record<PiToolName, string> = {
  bash: `Runs a bash command in the Toolwire sandbox (a remote workspace, not this machine). Output is the last ${OUTPUT_LINES} lines or ${OUTPUT_BYTES / 1024} KB unless head, tail or maxBytes choose another window; the complete output is saved to a file in the sandbox that read and grep can open, and the footer names the read call for the rest. timeout (seconds) is the hard limit; idleTimeout stops a command only after that long without output. Long commands: background: true answers after the first second with a job id (job_output reads on, kill stops, jobs lists).`,
  read: `Reads a text file in the Toolwire sandbox workspace (remote; paths are relative to the workspace root, or absolute under /workspace): numbered lines from offset (1-based), at most limit lines and ${OUTPUT_BYTES / 1024} KB.`,
  edit: "Edits a file in the Toolwire sandbox workspace (remote) by exact text replacement. Every edits[].oldText must match one region of the original file exactly, once, and not overlap another edit; merge nearby changes into one edit.",
  write:
    "Writes a file in the Toolwire sandbox workspace (remote): creates or replaces it whole, creating parent folders.",
  grep: "Searches file contents in the Toolwire sandbox workspace (remote). Returns path:line: text for up to limit matches (default 100), with context lines before and after each as path-line- text.",
  find: "Finds files by glob in the Toolwire sandbox workspace (remote), hidden files included, .gitignore respected; paths relative to the searched directory, up to limit (default 1000).",
  ls: "Lists a directory in the Toolwire sandbox workspace (remote): sorted, '/' after directories, dotfiles included, up to limit entries (default 500).",
};

type PiToolName = "bash" | "read" | "edit" | "write" | "grep" | "find" | "ls";

/** A registered tool's `execute`, as pi calls it. */
type ToolExecute = (
  toolCallId: string,
  params: unknown,
  signal: AbortSignal | undefined,
  onUpdate: unknown,
  ctx: ExtensionContext,
) => Promise<unknown>;

/** pi's own definitions, for their names, labels, parameter schemas and renderers. */
function piDefinitions(cwd: string) {
  return {
    bash: createBashToolDefinition(cwd),
    read: createReadToolDefinition(cwd),
    edit: createEditToolDefinition(cwd),
    write: createWriteToolDefinition(cwd),
    grep: createGrepToolDefinition(cwd),
    find: createFindToolDefinition(cwd),
    ls: createLsToolDefinition(cwd),
  };
}

/**
 * Registers the seven tools (bash with Toolwire's window, idle timeout and background
 * arguments), the background-job tools `jobs`, `job_output` and `kill`, `expose_port`, and `/toolwire`
 * on `pi`, calling Toolwire as `settings` say.
 * @example export default (pi: ExtensionAPI) => registerToolwireTools(pi, settingsFromEnv(process.env));
 */
export function registerToolwireTools(pi: ExtensionAPI, settings: PiToolwireSettings): void {
  let links: CallLinks | null = null;
  let statusContext: ExtensionContext | null = null;
  const sandbox = new SessionSandbox(pi, settings);
  const showStatus = () => {
    statusContext?.ui.setStatus("toolwire", statusLine(settings, sandbox.current, links));
  };
  const execute =
    (name: string): ToolExecute =>
    async (toolCallId, params, signal, onUpdate, ctx) => {
      statusContext = ctx;
      const where = await sandbox.id(ctx);
      showStatus();
      return runRemote(
        settings,
        {
          tool: name,
          // pi validated them against the same schemas Toolwire checks.
          args: params as JsonValue,
          toolCallId,
          runId: ctx.sessionManager.getSessionId(),
          sandbox: where,
        },
        signal,
        onUpdate as Parameters<typeof runRemote>[3],
        (next) => {
          links = next;
          showStatus();
        },
      );
    };
  const definitions = piDefinitions(process.cwd());
  for (const name of Object.keys(definitions) as PiToolName[]) {
    const own = definitions[name];
    pi.registerTool({
      name: own.name,
      label: own.label,
      description: DESCRIPTIONS[name],
      parameters:
        name === "bash"
          ? bashParameters(own.parameters as unknown as JsonSchemaObject)
          : own.parameters,
      ...(own.prepareArguments ? { prepareArguments: own.prepareArguments } : {}),
      ...(own.renderShell ? { renderShell: own.renderShell } : {}),
      execute: execute(name),
    } as Parameters<ExtensionAPI["registerTool"]>[0]);
  }
  for (const tool of [...STEERING_TOOLS, EXPOSE_PORT_TOOL]) {
    pi.registerTool({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      parameters: tool.parameters,
      execute: execute(tool.name),
    } as unknown as Parameters<ExtensionAPI["registerTool"]>[0]);
  }
  pi.registerCommand("toolwire", {
    description:
      "Show the Toolwire sandbox the tools run in and the run view link; /toolwire delete deletes this session's sandbox",
    handler: async (args, ctx) => {
      if (args.trim() === "delete") {
        try {
          ctx.ui.notify(await sandbox.remove(), "info");
        } catch (err) {
          ctx.ui.notify(
            `toolwire: could not delete the sandbox: ${(err as Error).message}`,
            "error",
          );
        }
        links = null;
        showStatus();
        return;
      }
      try {
        await sandbox.id(ctx);
      } catch {
        // The status line says what is missing; the first tool call says why it failed.
      }
      ctx.ui.notify(statusLine(settings, sandbox.current, links), "info");
    },
  });
  pi.on("session_start", (_event, ctx) => {
    statusContext = ctx;
    links = null;
    sandbox.open(ctx);
    showStatus();
  });
}

/** `toolwire: sandbox "sbx_…" at <url> · run <link>`, or why calls cannot be made. */
export function statusLine(
  settings: PiToolwireSettings,
  sandbox: string | null,
  links: CallLinks | null,
): string {
  if (!settings.url) return "toolwire: TOOLWIRE_URL is not set";
  const name = sandbox === null ? "of this session (not made yet)" : `"${sandbox}"`;
  const where = `toolwire: sandbox ${name} at ${settings.url}`;
  const view = links?.runViewUrl ?? links?.viewUrl;
  return view ? `${where} · run ${view}` : `${where} · no call yet`;
}

/** The extension pi loads: settings from the environment. */
export default function toolwirePi(pi: ExtensionAPI): void {
  registerToolwireTools(pi, settingsFromEnv(process.env));
}
