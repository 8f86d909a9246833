/**
 * Toolwire's MCP endpoint: Streamable HTTP on the official SDK (`createMcpHandler` of
 * `@modelcontextprotocol/server`, docs/decisions/100), serving 2026-07-28 (stateless,
 * per-request `_meta`) and 2025-11-25 (the `initialize` handshake, signed session ids).
 * Every `tools/call` is an invocation in its DO, reached only through an
 * `InvocationPort` the host (the Worker) supplies; this folder imports no Worker or DO
 * code. Authentication is the host's job, done before `handleMcpRequest` is called.
 */
import {
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isInitializeRequest,
  isLegacyRequest,
  readRequestBody,
} from "@modelcontextprotocol/server";
import { rebindingRefusal } from "./rebinding.ts";
import { serveResumable } from "./resumable.ts";
import {
  SERVER_INFO,
  SESSION_HEADER,
  type ToolwireServerOptions,
  toolwireServer,
} from "./server.ts";
import { isIssuedSessionId, mintSessionId } from "./session-id.ts";
import { serveTaskListen, taskListenOf } from "./task-notifications.ts";

export type { InvocationPort, SessionStore } from "./port.ts";
export { allowedHostnames } from "./rebinding.ts";
export { SESSION_HEADER } from "./server.ts";
export { MCP_TOOLS } from "./tools.ts";

export interface McpEndpointOptions extends ToolwireServerOptions {
  /** Key that signs 2025-11-25 session ids. */
  sessionSecret: string;
  /** Hostnames (with loopback) that `Host` and `Origin` may name. */
  allowedHosts: string[];
  /** Seconds of silence before an SSE stream gets a `: keepalive` comment. */
  keepAliveMs: number;
}

/**
 * A JSON-RPC error answer with no request id, as the transport's own refusals are.
 * @example jsonRpcError(404, -32001, "Session not found: initialize a new session")
 */
export function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

/** Headers every `/mcp` answer carries: no proxy buffering of streams, no caching. */
function withStreamHeaders(res: Response, extra: Record<string, string> = {}): Response {
  const headers = new Headers(res.headers);
  headers.set("X-Accel-Buffering", "no");
  headers.set("Cache-Control", "no-store");
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/**
 * The JSON body of a POST, read from a clone under the SDK's bound and parsed once for
 * every step after (routing, the SDK's classification and its handler); undefined when
 * there is none, it is over the bound or it is not JSON (the SDK then reads the request
 * itself and answers as it does).
 */
async function bodyOf(req: Request): Promise<unknown> {
  if (req.method !== "POST") return undefined;
  try {
    const read = await readRequestBody(req.clone(), DEFAULT_MAX_REQUEST_BODY_SIZE);
    return read.tooLarge ? undefined : JSON.parse(read.text);
  } catch {
    return undefined;
  }
}

/**
 * What a request is to the session layer: a 2025-11-25 `initialize` (a session begins),
 * a request of a 2025-11-25 session (its id in `Mcp-Session-Id`, null when missing), or
 * a 2026-07-28 request, which has no session.
 * @example await sessionRequestOf(req) // { kind: "session", sessionId: "ms1.…" }
 */
export async function sessionRequestOf(
  req: Request,
): Promise<
  { kind: "initialize" } | { kind: "session"; sessionId: string | null } | { kind: "stateless" }
> {
  const body = await bodyOf(req);
  if (!(await isLegacyRequest(req, body))) return { kind: "stateless" };
  if (isInitializeRequest(body)) return { kind: "initialize" };
  return { kind: "session", sessionId: req.headers.get(SESSION_HEADER) };
}

function callsToolwireTool(body: unknown, tools: ToolwireServerOptions["tools"]): boolean {
  const call = body as { method?: unknown; params?: { name?: unknown } } | undefined;
  if (call?.method !== "tools/call") return false;
  return tools.some((tool) => tool.name === call.params?.name);
}

/**
 * Answers one request to `/mcp`.
 * @example app.all("/mcp", (c) => handleMcpRequest(c.req.raw, options))
 */
export async function handleMcpRequest(
  req: Request,
  options: McpEndpointOptions,
): Promise<Response> {
  const refused = rebindingRefusal(req, options.allowedHosts);
  if (refused) return refused;
  // A listen stream for task notifications is Toolwire's (the SDK's router cannot carry
  // them, decision 108); every other listen is the SDK's.
  const body = await bodyOf(req);
  const listen = taskListenOf(req, body);
  if (listen !== undefined) {
    return withStreamHeaders(
      await serveTaskListen(listen, {
        port: options.port,
        ttlMs: options.taskTtlMs,
        keepAliveMs: options.keepAliveMs,
        serverInfo: SERVER_INFO,
        signal: options.requestSignal,
      }),
    );
  }
  const handler = createMcpHandler((ctx) => toolwireServer(options, ctx), {
    legacy: "stateless",
    // A call of a Toolwire tool is always a stream: its keep-alive comments keep proxies
    // from cutting a long call, and a write to a closed connection is how a runtime
    // without request-abort signals learns that a 2026-07-28 client went away (which
    // cancels the call). Everything else answers as the SDK chooses (JSON unless it
    // streams), so ladder errors keep their HTTP status.
    responseMode: callsToolwireTool(body, options.tools) ? "sse" : "auto",
    keepAliveMs: options.keepAliveMs,
  });
  const parsed = body === undefined ? {} : { parsedBody: body };
  if (!(await isLegacyRequest(req, body)))
    return withStreamHeaders(await handler.fetch(req, parsed));

  // 2025-11-25: the handshake mints a session id; later requests must bring a live one.
  if (isInitializeRequest(body)) {
    const res = await handler.fetch(req, parsed);
    if (!res.ok) return withStreamHeaders(res);
    return withStreamHeaders(res, { "Mcp-Session-Id": await mintSessionId(options.sessionSecret) });
  }
  const sessionId = req.headers.get(SESSION_HEADER);
  if (sessionId === null) {
    // The 2025 transports: a server that issues session ids answers a request without
    // one (other than initialize) with 400 Bad Request.
    return withStreamHeaders(
      jsonRpcError(
        400,
        -32000,
        "Bad Request: Mcp-Session-Id header is required; send initialize first and repeat the id it answers with",
      ),
    );
  }
  const live =
    (await isIssuedSessionId(options.sessionSecret, sessionId)) &&
    !(await options.sessions.isTerminated(sessionId));
  if (!live) return jsonRpcError(404, -32001, "Session not found: initialize a new session");
  if (req.method === "DELETE") {
    await options.sessions.terminate(sessionId);
    return withStreamHeaders(new Response(null, { status: 200 }));
  }
  // A session's POSTs stream with event ids, and a GET with Last-Event-ID resumes one
  // (decision 107); a GET without it stays 405 (no server-initiated stream).
  if (req.method === "POST" || (req.method === "GET" && req.headers.has("last-event-id"))) {
    return withStreamHeaders(await serveResumable(req, options, sessionId, body));
  }
  return withStreamHeaders(await handler.fetch(req, parsed));
}
