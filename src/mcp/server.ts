/**
 * The MCP server of one HTTP exchange: Toolwire's tools on an SDK `McpServer`, each
 * call an invocation through the port. Built fresh per request (the SDK's
 * `createMcpHandler` asks for a factory), so it holds nothing between requests: what a
 * call needs later lives in its invocation DO.
 */
import { type McpRequestContext, McpServer } from "@modelcontextprotocol/server";
import { type AnyTool, isBackgroundCall } from "../tools/index.ts";
import { backgroundCall, runCall, startCall } from "./call.ts";
import { callIdentity, sessionCallId } from "./identity.ts";
import type { InvocationPort, SessionStore } from "./port.ts";
import { createTaskResult, registerTaskMethods, requestDeclaresTasks } from "./tasks.ts";
import { registerToolwireTools } from "./tools.ts";

/** Name and version the server reports in `initialize` and `server/discover`. */
export const SERVER_INFO = { name: "toolwire", version: "0.1.0" } as const;

/** Header carrying a 2025-11-25 session id. */
export const SESSION_HEADER = "mcp-session-id";

export interface ToolwireServerOptions {
  port: InvocationPort;
  tools: readonly AnyTool[];
  /** Sandbox every call runs on. */
  sandbox: string;
  sessions: SessionStore;
  /** The HTTP request's own signal: aborts when the client's connection goes. */
  requestSignal?: AbortSignal;
  /** Keeps work (a cancel) running after the response has gone. */
  waitUntil?: (work: Promise<unknown>) => void;
  /**
   * `ttlMs` of a task (how long a settled invocation is kept); `null` when retention is
   * 0 days (a task is then readable until it settles, not for a stated time).
   */
  taskTtlMs: number | null;
  /** Registers more tools or handlers (the conformance fixtures of the test Worker). */
  extend?: (server: McpServer) => void;
}

/**
 * A fresh server for one exchange of `ctx.era`.
 * @example createMcpHandler((ctx) => toolwireServer(options, ctx))
 */
export function toolwireServer(options: ToolwireServerOptions, ctx: McpRequestContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, logging: {} },
    instructions:
      "Toolwire runs each tool call as a durable invocation: output is bounded at its source, the complete output of bash stays a read-only file in the sandbox that read and grep open by the path its footer names, and every result links to a live viewer.",
  });
  const sessionId = ctx.requestInfo?.headers.get(SESSION_HEADER) ?? undefined;
  const modern = ctx.era === "modern";
  const { port, sessions } = options;
  const background = (work: Promise<unknown>) => {
    const settled = work.catch(() => {});
    options.waitUntil?.(settled);
  };
  registerToolwireTools(server, options.tools, async (tool, args, call) => {
    const requestId = call.mcpReq.id;
    const identity = await callIdentity({
      meta: call.mcpReq._meta as Record<string, unknown> | undefined,
      sessionId,
      requestId,
    });
    if (identity.from === "meta" && sessionId !== undefined && !modern) {
      await sessions.rememberCall(sessionId, requestId, identity.id);
    }
    if (modern && requestDeclaresTasks(call.mcpReq)) {
      // A task: answered once the DO has stored the invocation; the run never waits on
      // this exchange, and tasks/get reads it from the DO (docs/decisions/106).
      const { view } = await startCall(port, {
        invocationId: identity.id,
        tool: tool.name,
        args,
        sandbox: options.sandbox,
      });
      return createTaskResult(view, options.taskTtlMs);
    }
    const token = call.mcpReq._meta?.progressToken;
    // The SDK aborts its signal on an in-band cancel; the request's own signal aborts
    // when the client's connection goes (enable_request_signal). On 2025-11-25 that is
    // no end of the call: the watch goes on so its response is stored for a resume.
    if (isBackgroundCall({ tool: tool.name, args: args.raw })) {
      return backgroundCall(port, {
        invocationId: identity.id,
        tool: tool.name,
        args,
        sandbox: options.sandbox,
      });
    }
    const signals = [call.mcpReq.signal, modern ? options.requestSignal : undefined].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    return runCall(port, {
      invocationId: identity.id,
      tool: tool.name,
      args,
      sandbox: options.sandbox,
      signal: AbortSignal.any(signals),
      // 2026-07-28: closing the stream is cancellation. 2025-11-25: it is not; the
      // client cancels with notifications/cancelled (handled below) or resumes.
      cancelOnAbort: () => modern,
      background,
      progress:
        token === undefined
          ? undefined
          : (value) =>
              call.mcpReq.notify({
                method: "notifications/progress",
                params: { progressToken: token, progress: value.progress, message: value.message },
              }),
    });
  });
  if (!modern && sessionId !== undefined) {
    // A 2025-11-25 cancel arrives in its own POST, served by another instance than the
    // call's: the session's record (or the derived id) names the invocation to stop.
    server.server.setNotificationHandler("notifications/cancelled", (note) => {
      const requestId = note.params.requestId;
      if (requestId === undefined) return;
      // The SDK answers the notification's POST (202) before this work is done.
      background(
        (async () => {
          const id =
            (await sessions.callOf(sessionId, requestId)) ??
            (await sessionCallId(sessionId, requestId));
          await port.cancel(id);
        })(),
      );
    });
  }
  if (modern) registerTaskMethods(server, port, options.taskTtlMs);
  options.extend?.(server);
  // The tool list is fixed for a deployment: nothing ever sends list_changed.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}
