/**
 * One `tools/call` as an invocation: start it in its DO (or join the one with the same
 * identity), report progress while it runs, and answer with the bounded fold once it
 * settles. The run lives in the DO; this request only watches it, so what happens when
 * the request goes away is a choice (`cancelOnAbort`), not an accident.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { InvocationView, ProgressPoll } from "../protocol/index.ts";
import { firstMoment, inputDetails } from "../tools/index.ts";
import { foldResult, META_KEY } from "./fold.ts";
import { failure, unwrapOutcome } from "./outcome.ts";
import type { InvocationPort } from "./port.ts";
import { PROGRESS_INTERVAL_MS, ProgressTracker, type ProgressValue } from "./progress.ts";
import type { CheckedArgs } from "./tools.ts";

export interface ToolCall {
  invocationId: string;
  tool: string;
  /** Checked and parsed by the tool's schema at the MCP edge (tools.ts). */
  args: CheckedArgs;
  sandbox: string;
  /** Aborted when the client cancels or its stream goes away. */
  signal: AbortSignal;
  /**
   * Cancel the invocation when `signal` aborts. True for 2026-07-28 (closing the stream
   * is cancellation) and for an explicit `notifications/cancelled`; false when a
   * 2025-11-25 stream merely closed (the call goes on and can be resumed).
   */
  cancelOnAbort: () => boolean;
  /** Runs work that must outlive the response (the cancel after a stream closed). */
  background: (work: Promise<unknown>) => void;
  /** Sends one progress notification; absent when the client sent no `progressToken`. */
  progress?: (value: ProgressValue) => Promise<void>;
}

/** Starts (or joins) the invocation; `created` is false when it already existed. */
export async function startCall(
  port: InvocationPort,
  call: Pick<ToolCall, "invocationId" | "tool" | "args" | "sandbox">,
): Promise<{ created: boolean; view: InvocationView }> {
  return unwrapOutcome(
    await port.start({
      tool: call.tool,
      args: call.args.raw,
      params: call.args.params,
      toolCallId: call.invocationId,
      runId: call.invocationId,
      turnId: call.invocationId,
      sandbox: call.sandbox,
    }),
  );
}

/**
 * The result of a settled invocation, folded for MCP: one read of the DO.
 * @example await settledResult(port, "call_1")
 */
export async function settledResult(port: InvocationPort, id: string): Promise<CallToolResult> {
  const poll = unwrapOutcome(await port.progress(id, 0));
  if (poll.status !== "settled") throw failure(`invocation ${id} has not settled yet`);
  return foldSettled(port, id, poll);
}

async function foldSettled(
  port: InvocationPort,
  id: string,
  poll: Extract<ProgressPoll, { status: "settled" }>,
): Promise<CallToolResult> {
  return foldResult(id, poll.result, poll.cancelled, await port.links(id));
}

/**
 * Runs `call` to its settled result. Progress is read from the DO once a second at
 * most; each read long-polls for the settle, so a settle is seen at once, and it
 * carries the result: a settled call reads the DO no more.
 */
export async function runCall(port: InvocationPort, call: ToolCall): Promise<CallToolResult> {
  await startCall(port, call);
  const id = call.invocationId;
  const onAbort = () => {
    if (call.cancelOnAbort()) call.background(port.cancel(id));
  };
  if (call.signal.aborted) onAbort();
  else call.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const tracker = new ProgressTracker();
    for (;;) {
      const poll = unwrapOutcome(await port.progress(id, PROGRESS_INTERVAL_MS));
      if (poll.status === "settled") return await foldSettled(port, id, poll);
      if (call.signal.aborted)
        throw failure(
          `the call was stopped; invocation ${id} ${call.cancelOnAbort() ? "was cancelled" : "goes on"}`,
        );
      if (call.progress !== undefined) {
        const value = tracker.next(poll);
        if (value !== null) await call.progress(value);
      }
    }
  } finally {
    call.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * A `bash { background: true }` call: started, then answered after its first moment
 * (or its end) with the invocation id and what it printed; it runs on in its DO.
 * @example await backgroundCall(port, { invocationId: "call_1", tool: "bash", args, sandbox: "default" })
 */
export async function backgroundCall(
  port: InvocationPort,
  call: Pick<ToolCall, "invocationId" | "tool" | "args" | "sandbox">,
): Promise<CallToolResult> {
  await startCall(port, call);
  const id = call.invocationId;
  const first = await firstMoment(
    {
      result: (waitMs) => port.result(id, waitMs),
      view: () => port.view(id),
      commitRead: (reader, range) => port.commitRead(id, reader, range),
      lines: (view, range) => port.outputLines(view, range),
      input: (view) => port.inputState(view),
    },
    id,
  );
  if (first.view.status === "settled") return settledResult(port, id);
  const links = await port.links(id);
  return {
    content: [
      { type: "text", text: `${first.text}${first.note}` },
      {
        type: "resource_link",
        uri: links.viewUrl,
        name: `toolwire-${id}`,
        title: "Live view of this call",
        description: "Toolwire's live viewer for this invocation (the link is valid for 1 hour).",
        mimeType: "text/html",
      },
    ],
    structuredContent: {
      invocationId: id,
      truncation: first.view.state.truncation,
      exit: { status: "running" },
      ...(first.shown ? { shown: first.shown } : {}),
      ...inputDetails(first.input),
    },
    _meta: { [META_KEY]: { id, viewUrl: links.viewUrl } },
  };
}
