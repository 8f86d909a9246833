/**
 * The MCP server of one HTTP exchange: Toolwire's tools on an SDK `McpServer`, each
 * call an invocation through the port. Built fresh per request (the SDK's
 * `createMcpHandler` asks for a factory), so it holds nothing between requests: what a
 * call needs later lives in its invocation DO.
 */
import { type McpRequestContext, McpServer } from "@modelcontextprotocol/server";
import type { AnyTool } from "../tools/index.ts";
import { runCall } from "./call.ts";
import { callIdentity, sessionCallId } from "./identity.ts";
import type { InvocationPort } from "./port.ts";
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
      "Toolwire runs each tool call as a durable invocation: output is bounded at its source, the complete output of bash stays a file in the sandbox that read and grep can open, and every result links to a live viewer.",
  });
  const sessionId = ctx.requestInfo?.headers.get(SESSION_HEADER) ?? undefined;
  const modern = ctx.era === "modern";
  registerToolwireTools(server, options.tools, async (tool, args, call) => {
    const invocationId = await callIdentity({
      meta: call.mcpReq._meta as Record<string, unknown> | undefined,
      sessionId,
      requestId: call.mcpReq.id,
    });
    const token = call.mcpReq._meta?.progressToken;
    return runCall(options.port, {
      invocationId,
      tool: tool.name,
      args,
      sandbox: options.sandbox,
      signal: call.mcpReq.signal,
      // 2026-07-28: closing the stream is cancellation. 2025-11-25: it is not (the
      // client sends notifications/cancelled, handled below, or resumes).
      cancelOnAbort: () => modern,
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
    // A 2025-11-25 cancel arrives as its own POST, served by another instance than the
    // call's: the session and request id name the invocation to stop.
    server.server.setNotificationHandler("notifications/cancelled", async (note) => {
      const requestId = note.params.requestId;
      if (requestId === undefined) return;
      await options.port.cancel(await sessionCallId(sessionId, requestId));
    });
  }
  options.extend?.(server);
  return server;
}
