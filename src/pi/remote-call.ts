/**
 * One pi tool call as one Toolwire invocation: created with pi's `toolCallId` (so a
 * retried or resumed call never runs twice) and the pi session id as `runId`, followed
 * live (each change of the fold goes to `onUpdate`), ended by Toolwire's settled result.
 * pi's abort cancels the invocation; the output so far is kept in its result. A
 * `bash { background: true }` call that is still running after its first moment is
 * answered at once with what it printed and its job id; it runs on in Toolwire.
 */
import {
  type CreatedInvocation,
  type JsonValue,
  type SettledResult,
  type ToolOutputState,
  ToolwireClient,
  ToolwireError,
} from "../client/index.ts";
import { type PiDetails, piDetails } from "./details.ts";
import { missingSetting, type PiToolwireSettings } from "./settings.ts";

/** What pi gets back from a tool: its content and its renderer's details. */
export interface PiToolResult {
  content: SettledResult["content"];
  details: PiDetails;
}

/** One call to make: the tool, its args, pi's ids. */
export interface RemoteCall {
  tool: string;
  args: JsonValue;
  toolCallId: string;
  runId: string;
  /** The sandbox it runs in: the pi session's own, or the one `TOOLWIRE_SANDBOX` names. */
  sandbox: string;
}

/** How long creating an invocation may take before the call fails as unreachable. */
const CREATE_TIMEOUT_MS = 15_000;
/** How long one long-poll for the settled result waits. */
const RESULT_WAIT_SECONDS = 20;

/** The links of the last invocation made, for `/toolwire` and the status line. */
export interface CallLinks {
  viewUrl: string;
  runViewUrl?: string;
}

/**
 * Runs `call` on Toolwire and resolves with pi's result, or throws an Error whose
 * message is what the model reads (Toolwire's failed result, or why Toolwire could not
 * be reached). Never hangs on an unreachable Toolwire: creation has a deadline.
 * @example await runRemote(settings, { tool: "bash", args: { command: "ls" }, toolCallId, runId }, signal, onUpdate)
 */
export async function runRemote(
  settings: PiToolwireSettings,
  call: RemoteCall,
  signal: AbortSignal | undefined,
  onUpdate: ((partial: PiToolResult) => void) | undefined,
  onLinks?: (links: CallLinks) => void,
): Promise<PiToolResult> {
  const missing = missingSetting(settings);
  if (missing) throw new Error(`Toolwire is not configured: ${missing}`);
  if (signal?.aborted) throw new Error("Operation aborted");
  const client = new ToolwireClient({ baseUrl: settings.url, token: settings.token });
  const created = await create(client, settings, call, signal);
  onLinks?.({
    viewUrl: created.viewUrl,
    ...(created.runViewUrl ? { runViewUrl: created.runViewUrl } : {}),
  });
  if (created.firstMoment && created.status === "running") {
    const { text, note } = created.firstMoment;
    return { content: [{ type: "text", text: `${text}${note}` }], details: undefined };
  }

  // Node 20 has no global WebSocket; the SSE stream carries the same events there.
  const transport = typeof globalThis.WebSocket === "function" ? "socket" : "sse";
  const subscription = client.subscribe(created, { transport });
  let lastShown = "";
  const stopWatching = subscription.onChange((s) => {
    if (!onUpdate || s.state === null || (s.status !== "live" && s.status !== "settled")) return;
    const mark = stateMark(s.state);
    if (mark === lastShown) return;
    lastShown = mark;
    onUpdate({ content: s.state.content, details: piDetails(call.tool, s.state) });
  });
  const cancel = () => {
    client.cancel(created.id).catch(() => {});
  };
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    await subscription.finished;
    const result = await settledResult(client, created.id);
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    if (result.isError) throw new Error(text);
    return { content: result.content, details: piDetails(call.tool, result) };
  } finally {
    signal?.removeEventListener("abort", cancel);
    stopWatching();
    subscription.close();
  }
}

async function create(
  client: ToolwireClient,
  settings: PiToolwireSettings,
  call: RemoteCall,
  signal: AbortSignal | undefined,
): Promise<CreatedInvocation> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${CREATE_TIMEOUT_MS / 1000} s`)),
      CREATE_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      client.createInvocation({
        tool: call.tool,
        args: call.args,
        toolCallId: call.toolCallId,
        runId: call.runId,
        sandbox: call.sandbox,
      }),
      deadline,
    ]);
  } catch (err) {
    if (signal?.aborted) throw new Error("Operation aborted");
    if (err instanceof ToolwireError && err.code !== "unreachable") {
      throw new Error(`Toolwire refused the ${call.tool} call: ${err.message}`);
    }
    throw new Error(
      `Toolwire at ${settings.url} is unreachable (${(err as Error).message}); start it with npm start, or check TOOLWIRE_URL`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** The settled result; the subscription has ended, so this answers at once or after a short wait. */
async function settledResult(client: ToolwireClient, id: string): Promise<SettledResult> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const poll = await client.result(id, { wait: RESULT_WAIT_SECONDS });
    if (poll.status === "settled") return poll.result;
  }
  throw new Error(`Toolwire invocation ${id} did not settle`);
}

/** What tells two folded states apart for the TUI: text size and the source's totals. */
function stateMark(state: ToolOutputState): string {
  const chars = state.content.reduce((n, c) => n + (c.type === "text" ? c.text.length : 1), 0);
  return `${chars}/${state.truncation.totalBytes}/${state.truncation.totalLines}`;
}
