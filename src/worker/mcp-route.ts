/**
 * `/mcp`: the MCP adapter (src/mcp) mounted on the Worker. This file is the one place
 * that wires it to the rest: the bearer check (the operator's token, or a sandbox token
 * for its own sandbox's endpoint), the invocation DOs behind an `InvocationPort`
 * (validated the way `POST /v1/invocations` validates, and confined to the session's
 * sandbox), subscribe-token links for the viewer, and the session-termination objects.
 */
import { Hono } from "hono";
import { checkSandboxName, DEFAULT_SANDBOX, placementOf } from "../execenv/index.ts";
import {
  allowedHostnames,
  handleMcpRequest,
  type InvocationPort,
  MCP_TOOLS,
  type McpEndpointOptions,
  type SessionStore,
} from "../mcp/index.ts";
import {
  type ExecLoad,
  type InvocationView,
  NEW_SANDBOX,
  type Outcome,
  type StartRequest,
  type WorkerConfig,
  workerConfig,
} from "../protocol/index.ts";
import { type AnyTool, getTool, inputStateOf, outputLines, scopedCall } from "../tools/index.ts";
import { authorizeAgent, refuseSandboxToken, sandboxScope, subscribeSecret } from "./auth.ts";
import { ApiException, raise } from "./errors.ts";
import { refuseOtherCall } from "./invocation-routes.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { SANDBOX_HEADER, sessionSandbox } from "./mcp-session-sandbox.ts";
import { sandboxStub } from "./sandbox-stub.ts";
import { mintSubscribeToken } from "./subscribe-token.ts";

/**
 * The engine behind `/mcp`: the invocation DOs, checked like the HTTP API checks. Every
 * id it is given is reached through `scopedCall`: a session in one sandbox reaches the
 * calls of that sandbox only (decision 251), whatever token opened it.
 */
export function invocationPort(
  req: Request,
  env: Env,
  sandbox: string = DEFAULT_SANDBOX,
): InvocationPort {
  const call = (id: string) => scopedCall(env, id, sandbox);
  return {
    async start(request: StartRequest) {
      const sandbox = checkSandboxName(env, request.sandbox);
      if (!sandbox.ok) return sandbox;
      let hostLoad: ExecLoad | null = null;
      if (getTool(request.tool)?.sandbox && placementOf(request.sandbox) !== null) {
        const used = await sandboxStub(env, request.sandbox).useForCall(request.toolCallId);
        if (!used.ok) return used;
        hostLoad = used.value;
      }
      const started = await invocationStub(env, request.toolCallId).start(
        hostLoad ? { ...request, hostLoad } : request,
      );
      if (!started.ok || started.value.created) return started;
      try {
        refuseOtherCall(started.value.view, request);
      } catch (err) {
        if (err instanceof ApiException) return { ok: false, error: err.error };
        throw err;
      }
      return started;
    },
    view: (id): Promise<Outcome<InvocationView>> => call(id).view(),
    progress: (id, waitMs) => call(id).progress(waitMs),
    result: (id, waitMs) => call(id).result(waitMs),
    cancel: (id) => call(id).cancel(),
    commitRead: (id, reader, range) => call(id).commitRead(reader, range),
    outputLines: (view, range) => outputLines(env, view, range),
    inputState: (view) => inputStateOf(env, view),
    async links(id) {
      const subscribeToken = await mintSubscribeToken(subscribeSecret(env), id, Date.now());
      const origin = new URL(req.url).origin;
      const viewUrl = `${origin}/view/${encodeURIComponent(id)}?token=${encodeURIComponent(subscribeToken)}`;
      return { viewUrl, subscribeToken };
    },
  };
}

function sessionStore(env: Env): SessionStore {
  const session = (id: string) => env.MCP_SESSIONS.getByName(id);
  return {
    isTerminated: (id) => session(id).isTerminated(),
    terminate: (id) => session(id).terminate(),
    rememberCall: (id, requestId, invocationId) =>
      session(id).rememberCall(requestId, invocationId),
    callOf: async (id, requestId) => (await session(id).callOf(requestId)) ?? undefined,
    appendEvent: (id, streamId, message) => session(id).appendEvent(streamId, message),
    eventsAfter: (id, streamId, seq) => session(id).eventsAfter(streamId, seq),
  };
}

/**
 * A task's `ttlMs`: how long a settled invocation is kept (`SETTLED_RETENTION_DAYS`),
 * which bounds from below how long it is readable after its creation; `null` at 0 days.
 * @example taskTtlMs(workerConfig({ SETTLED_RETENTION_DAYS: "1" })) // 86_400_000
 */
export function taskTtlMs(config: Pick<WorkerConfig, "settledRetentionMs">): number | null {
  return config.settledRetentionMs > 0 ? config.settledRetentionMs : null;
}

/** Everything `/mcp` needs for one request, from the Worker's environment. */
export function mcpOptions(
  req: Request,
  env: Env,
  tools: readonly AnyTool[],
  sandbox: string = DEFAULT_SANDBOX,
): McpEndpointOptions {
  const config = workerConfig(env);
  return {
    port: invocationPort(req, env, sandbox),
    tools,
    sandbox,
    // Session ids are signed with a key derived from SUBSCRIBE_SECRET (domain-separated in the MAC).
    sessionSecret: subscribeSecret(env),
    sessions: sessionStore(env),
    allowedHosts: allowedHostnames(config.mcpAllowedHosts),
    // A write is also how a closed client connection is noticed where the runtime does not
    // abort the request by itself (wrangler dev's proxy), so it bounds how late a
    // 2026-07-28 stream close becomes a cancel there.
    keepAliveMs: config.mcpKeepAliveMs,
    taskTtlMs: taskTtlMs(config),
  };
}

/** The built-in tools `/mcp` lists. */
export function mcpTools(): AnyTool[] {
  return MCP_TOOLS.map((name) => getTool(name)).filter((t): t is AnyTool => t !== undefined);
}

/**
 * The `/mcp` route, given the tools it lists and an optional hook for more (tests).
 * `ownSandbox`: every session gets a sandbox of its own (`/mcp/sandbox/new`); on `/mcp`
 * the `Toolwire-Sandbox: new` header asks for the same.
 * @example app.route("/mcp", mcpRoute())
 */
export function mcpRoute(
  extend?: McpEndpointOptions["extend"],
  tools: () => AnyTool[] = mcpTools,
  options: { ownSandbox?: boolean } = {},
) {
  const route = new Hono<{ Bindings: Env }>();
  route.all("/", async (c) => {
    const confined = sandboxScope(await authorizeAgent(c.req.raw, c.env));
    const serve = (sandbox: string | undefined) =>
      handleMcpRequest(c.req.raw, {
        ...mcpOptions(c.req.raw, c.env, tools(), sandbox),
        extend,
        requestSignal: c.req.raw.signal,
        waitUntil: (work) => c.executionCtx.waitUntil(work),
      });
    // A session of its own sandbox (decision 222): the operator's token only.
    const own = options.ownSandbox || c.req.header(SANDBOX_HEADER) === NEW_SANDBOX;
    if (own) {
      if (confined !== null) refuseSandboxToken(confined);
      return sessionSandbox(c.req.raw, c.env, serve);
    }
    // Mounted at /mcp/sandboxes/:sandbox too: that session's calls run in that sandbox.
    // A sandbox token's session runs in its sandbox, at either URL, and in no other.
    const sandbox =
      (c.req.param("sandbox" as never) as string | undefined) ?? confined ?? undefined;
    if (confined !== null && sandbox !== confined) refuseSandboxToken(confined);
    if (sandbox !== undefined) {
      if (placementOf(sandbox) === null) {
        raise("bad_request", `path: '${sandbox}' is not a sandbox id (sbx_<host>_<20 hex>)`);
      }
      const view = unwrap(await sandboxStub(c.env, sandbox).view());
      if (view.status !== "active") {
        raise("gone", `sandbox ${sandbox} is ${view.status}: ${view.endReason}; create a new one`);
      }
    }
    return serve(sandbox);
  });
  return route;
}
