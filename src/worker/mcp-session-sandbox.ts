/**
 * An MCP session's own sandbox (`/mcp/sandbox/new`, or `/mcp` with `Toolwire-Sandbox:
 * new`; decision 222): made when the session's `initialize` is answered, recorded in
 * its session object, used by every later request of the session, removed when the
 * session is deleted. When the sandbox has ended (its idle timeout, a delete, its host
 * lost it), the session is over too: its next request is the transport's 404 "Session
 * not found", on which an MCP client initializes again, and so gets a new sandbox.
 */
import { jsonRpcError, SESSION_HEADER, sessionRequestOf } from "../mcp/index.ts";
import { makeSandbox } from "./new-sandbox.ts";
import { sandboxStub } from "./sandbox-stub.ts";

/** The header that asks `/mcp` for a sandbox of the session's own: `Toolwire-Sandbox: new`. */
export const SANDBOX_HEADER = "toolwire-sandbox";

/** Answers one request in the sandbox `sandbox` (the `/mcp` handler, bound to it). */
type ServeInSandbox = (sandbox: string) => Promise<Response>;

/**
 * Serves a request of a session that owns its sandbox, making the sandbox on `initialize`.
 * @example return sessionSandbox(c.req.raw, c.env, (sandbox) => handleMcpRequest(req, { ...options, sandbox }));
 */
export async function sessionSandbox(
  req: Request,
  env: Env,
  serve: ServeInSandbox,
): Promise<Response> {
  const request = await sessionRequestOf(req);
  if (request.kind === "stateless") {
    return jsonRpcError(
      400,
      -32000,
      "Bad Request: a sandbox of the session's own needs a session (MCP 2025-11-25 initialize); a 2026-07-28 request has none: create a sandbox (POST /v1/sandboxes) and use /mcp/sandboxes/<id>",
    );
  }
  if (request.kind === "initialize") {
    const { view: made } = await makeSandbox(env, { name: "mcp session" });
    const res = await serve(made.id);
    const sessionId = res.headers.get(SESSION_HEADER);
    if (res.ok && sessionId !== null) {
      await env.MCP_SESSIONS.getByName(sessionId).ownSandbox(made.id);
    } else await sandboxStub(env, made.id).remove();
    return res;
  }
  // Without a session id the transport answers its own 400; any sandbox name will do.
  if (request.sessionId === null) return serve("default");
  const session = env.MCP_SESSIONS.getByName(request.sessionId);
  const sandbox = await session.sandbox();
  if (sandbox === null) {
    return jsonRpcError(
      404,
      -32001,
      "Session not found: this URL serves sessions that own a sandbox; initialize a new session",
    );
  }
  if (req.method !== "DELETE") {
    const view = await sandboxStub(env, sandbox).view();
    if (view.ok && view.value.status !== "active") {
      await session.terminate();
      return jsonRpcError(
        404,
        -32001,
        `Session not found: its sandbox ${sandbox} is ${view.value.status} (${view.value.endReason}); initialize a new session for a new sandbox`,
      );
    }
  }
  return serve(sandbox);
}
