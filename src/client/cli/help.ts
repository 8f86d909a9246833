import type { CommandName } from "./parse-args.ts";

const CONNECTION = `Connection (every command):
  --url URL       the Toolwire Worker (default: $TOOLWIRE_URL, else http://127.0.0.1:8787)
  --token TOKEN   the API token (default: $TOOLWIRE_TOKEN)`;

const EXIT = `Exit status: 0 done; a failed command's own status (1-255; 1 for a tool
that failed without one); 2 usage error (bad option, unknown tool or invocation); 3
connection or auth error; 4 still running (result --wait); 124 timed out (its timeout
or idleTimeout); 130 cancelled, or left running by a second Ctrl-C.`;

const TOPICS: Record<CommandName | "main", string> = {
  main: `toolwire: run tools on a Toolwire Worker and follow their output live.

Usage: toolwire [--url URL] [--token TOKEN] <command> [options]

Commands:
  run <tool> [--name value]...   start an invocation and print its output live
  watch <id>                     follow a running invocation's output
  watch --run <runId>            follow every call of a run as it starts and settles
  attach <id> [--as NAME]        take over a tty call's terminal from yours (Ctrl-] detaches)
  output <id>                    print a call's whole output (toolwire output <id> > file)
  link <id>                      print a fresh viewer link (when an old one expired)
  link --run <runId>             print a fresh run page link
  result <id>                    print an invocation's result (waits for it)
  tools                          list the tools the Worker offers
  sandbox create|list|rm|upload|download|expose|ports|unexpose   created sandboxes (docs/sandboxes.md)

Run "toolwire <command> --help" for a command's options.

${CONNECTION}

${EXIT}`,
  run: `Usage: toolwire run [--id ID] [--run-id RUN] [--sandbox NAME] [--detach] [--sse] <tool> [--name value]... [--args JSON]

Starts an invocation of <tool> and prints its output as it arrives; on a terminal,
a progress line (bytes, lines, elapsed) is kept on stderr. Ctrl-C cancels the
invocation (and shows what it printed, then "cancelled"; exit 130); a second Ctrl-C
leaves at once with the invocation left running (exit 130).

Tool arguments come after the tool name: --name value, --name=value, a bare --flag,
or --args '<json object>' (pairs override it). Values take the type the tool's
schema gives them. Example:
  toolwire run bash --command "npm test" --timeout 600

Options (before the tool name):
  --id ID          the toolCallId (the same id again re-attaches to that invocation)
  --run-id RUN     file the call under run RUN (toolwire watch --run RUN, the run page)
  --sandbox NAME   the sandbox to run in (default: default)
  --detach         print the new invocation (id, viewUrl, …) as JSON and exit
  --sse            follow over Server-Sent Events instead of a WebSocket
  --as NAME        who you type as when "run bash --tty" attaches you (default: $USER)

"toolwire run bash --command CMD --tty" at a terminal is interactive: the call gets
your terminal's size (unless --cols/--rows say otherwise) and you are attached to it,
as "toolwire attach" does; Ctrl-] detaches and leaves it running.

${CONNECTION}

${EXIT}`,
  attach: `Usage: toolwire attach <id> [--as NAME]

Takes over a running tty call (bash with tty: true): your terminal shows its screen
and every key you press goes to it, Ctrl-C and Escape included, as if you sat at it.
Everyone watching sees that NAME typed (default: $USER), and the model's next read
says a person typed. While you are attached the call's terminal takes your size; it
gets its own back when you detach.

Ctrl-] detaches (exit 0; the call runs on). When the call ends, attach exits with its
status, as watch does. Needs a terminal; the API token or the call's sandbox's token
mints the attach token (POST /v1/invocations/:id/attach).

${CONNECTION}

${EXIT}`,
  watch: `Usage: toolwire watch <id> [--sse]
       toolwire watch --run <runId>

Follows an invocation's output until it ends, printing only new text, and exits
with its status.

With --run, follows a whole run instead: one line per call as it starts (status,
tool, id, args) and one as it settles (lines, bytes, elapsed), the run's calls so
far first, until Ctrl-C (exit 130).

${CONNECTION}

${EXIT}`,
  link: `Usage: toolwire link <id>
       toolwire link --run <runId>

Prints a fresh link to a call's viewer page, or with --run to a run's page. Links
carry a read-only token that lasts an hour; a page whose link has expired says to
run this. Needs the API token.

${CONNECTION}

${EXIT}`,
  output: `Usage: toolwire output <id> [> FILE]

Prints every byte a call's command printed, also the lines its window cut, as the
sandbox kept them: what "The whole output: toolwire output <id> > <id>.log" points at.

${CONNECTION}

${EXIT}`,
  result: `Usage: toolwire result <id> [--wait SECONDS] [--json]

Prints the invocation's final text (waiting for it to settle), or with --json the
whole result: { content, details, usage, addedTools, terminate, isError, truncation }.

  --wait SECONDS   give up after this long (exit 4); default: wait until it settles
  --json           print the result as JSON

${CONNECTION}

${EXIT}`,
  sandbox: `Usage: toolwire sandbox create [--name NAME] [--idle SECONDS] [--allow HOST[:PORT]]... [--json]
       toolwire sandbox list [--json]
       toolwire sandbox rm <id>...
       toolwire sandbox upload <id> <dir-or-tar> [--path PATH]
       toolwire sandbox download <id> [PATH] [--out FILE]
       toolwire sandbox expose <id> <PORT> [--for SECONDS] [--json]
       toolwire sandbox ports <id> [--json]
       toolwire sandbox unexpose <id> <PORT>

create prints the new sandbox's id (run a tool in it with run --sandbox <id>); each
--allow adds an entry (host, host:port or *.domain[:port]) to the hosts its commands may
reach through its proxy (without one it has no network); list
shows id, status, name and when it idles out; rm deletes (its running calls end as
cancelled, output kept); upload packs a directory with tar (or sends a .tar file) into
PATH of its workspace; download writes PATH as a tar archive to FILE or stdout.
expose prints a preview URL for a server listening on PORT in the sandbox (anyone with
the URL can open it, until --for SECONDS, default 3600); ports lists them; unexpose
revokes one.

${CONNECTION}

${EXIT}`,
  tools: `Usage: toolwire tools [--json]

Lists the Worker's tools and their parameters; --json prints names, descriptions
and JSON Schemas.

${CONNECTION}`,
};

/** The help text for a command, or the overview. */
export function helpText(topic?: CommandName): string {
  return TOPICS[topic ?? "main"];
}
