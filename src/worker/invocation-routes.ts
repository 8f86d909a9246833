/**
 * The `/v1/invocations` routes: create, read, long-poll the result, cancel, subscribe
 * (WebSocket or SSE, forwarded to the DO) and the producer API for agent-side tools.
 */
import { Hono } from "hono";
import type { InvocationView, StartRequest } from "../../durable-objects/protocol.ts";
import { forwardedSubscription } from "../../durable-objects/subscriber-expiry.ts";
import type { JsonValue } from "../chord/types.ts";
import { getTool, listTools, ToolArgsError } from "../tools/index.ts";
import { authorizeAgent, authorizeReader, subscribeSecret } from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { errorResponse, fail } from "./errors.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { noStore } from "./no-store.ts";
import { parseProducerBody } from "./producer-calls.ts";
import { sameJson } from "./same-json.ts";
import { checkSandboxName, DEFAULT_SANDBOX } from "./sandboxes.ts";
import { createInvocationBody, invocationIdParam, parseWith, waitQuery } from "./schemas.ts";
import { mintSubscribeToken } from "./subscribe-token.ts";

export const invocationRoutes = new Hono<{ Bindings: Env }>();
invocationRoutes.use("*", noStore);

function idParam(raw: string | undefined): string {
  return parseWith(invocationIdParam, raw, "path.id");
}

/** What a client needs to follow an invocation: absolute URLs that carry the token. */
async function links(req: Request, env: Env, id: string) {
  const token = await mintSubscribeToken(subscribeSecret(env), id, Date.now());
  const origin = new URL(req.url).origin;
  const base = `${origin}/v1/invocations/${encodeURIComponent(id)}`;
  const query = `?token=${encodeURIComponent(token)}`;
  return {
    subscribeToken: token,
    socketUrl: `${base.replace(/^http/, "ws")}/socket${query}`,
    eventsUrl: `${base}/events${query}`,
    viewUrl: `${origin}/view/${encodeURIComponent(id)}${query}`,
  };
}

function publicView(id: string, view: InvocationView) {
  return { ...view, id, toolCallId: id };
}

/**
 * A known `toolCallId` is the same invocation only for the same tool, args and sandbox;
 * anything else is a 409 that names the first field that differs.
 */
function refuseOtherCall(stored: InvocationView, request: StartRequest): void {
  const id = `toolCallId "${request.toolCallId}"`;
  const advice = "use a new toolCallId";
  if (stored.tool !== request.tool) {
    fail("conflict", `${id} already names an invocation of ${stored.tool}; ${advice}`);
  }
  if (!sameJson(stored.args, request.args)) {
    fail(
      "conflict",
      `${id} already names an invocation of ${stored.tool} with other args; ${advice}`,
    );
  }
  if (stored.sandbox !== request.sandbox) {
    fail(
      "conflict",
      `${id} already names an invocation on sandbox "${stored.sandbox}", not "${request.sandbox}"; ${advice}`,
    );
  }
}

invocationRoutes.post("/", async (c) => {
  await authorizeAgent(c.req.raw, c.env);
  const body = parseWith(createInvocationBody, await readJsonBody(c.req.raw), "body");
  const tool = getTool(body.tool);
  if (tool === undefined) {
    const known = listTools()
      .map((t) => t.name)
      .join(", ");
    fail("bad_request", `body.tool: unknown tool "${body.tool}" (known: ${known})`);
  }
  const args = (body.args ?? {}) as JsonValue;
  try {
    tool.parse(args);
  } catch (err) {
    // `parse` throws only for bad input (ToolDefinition's contract), whoever wrote the tool.
    const message = err instanceof Error ? err.message : String(err);
    fail(
      "bad_request",
      err instanceof ToolArgsError ? `${tool.name} ${message}` : `${tool.name} args: ${message}`,
    );
  }
  const sandbox = body.sandbox ?? DEFAULT_SANDBOX;
  unwrap(checkSandboxName(c.env, sandbox));
  subscribeSecret(c.env);

  const toolCallId = body.toolCallId ?? `call_${crypto.randomUUID().replaceAll("-", "")}`;
  const request: StartRequest = {
    tool: tool.name,
    args,
    toolCallId,
    runId: body.runId ?? toolCallId,
    turnId: body.turnId ?? toolCallId,
    sandbox,
  };
  const { created, view } = unwrap(await invocationStub(c.env, toolCallId).start(request));
  if (!created) refuseOtherCall(view, request);
  const response = {
    id: toolCallId,
    toolCallId,
    status: view.status,
    ...(await links(c.req.raw, c.env, toolCallId)),
  };
  return c.json(response, created ? 201 : 200);
});

invocationRoutes.get("/:id", async (c) => {
  const id = idParam(c.req.param("id"));
  await authorizeReader(c.req.raw, c.env, id);
  const view = unwrap(await invocationStub(c.env, id).view());
  return c.json(publicView(id, view));
});

invocationRoutes.get("/:id/result", async (c) => {
  const id = idParam(c.req.param("id"));
  await authorizeReader(c.req.raw, c.env, id);
  const waitSeconds = parseWith(waitQuery, c.req.query("wait"), "query.wait") ?? 0;
  const poll = unwrap(await invocationStub(c.env, id).result(Math.round(waitSeconds * 1000)));
  if (poll.status === "settled") return c.json(poll.result, 200);
  return c.json({ status: "running" as const }, 202);
});

invocationRoutes.post("/:id/cancel", async (c) => {
  const id = idParam(c.req.param("id"));
  await authorizeAgent(c.req.raw, c.env);
  const view = unwrap(await invocationStub(c.env, id).cancel());
  return c.json(publicView(id, view));
});

invocationRoutes.post("/:id/output", async (c) => {
  const id = idParam(c.req.param("id"));
  await authorizeAgent(c.req.raw, c.env);
  const { calls, end, seq } = parseProducerBody(await readJsonBody(c.req.raw));
  const view = unwrap(await invocationStub(c.env, id).produce(calls, end, seq));
  return c.json(publicView(id, view));
});

/**
 * Forwards a subscription to the DO once the caller and the invocation are known, with
 * the subscribe token's expiry (`expiresAt`, unix seconds; null for the bearer token).
 */
async function subscribe(
  req: Request,
  env: Env,
  id: string,
  path: "/socket" | "/events",
  expiresAt: number | null,
) {
  const stub = invocationStub(env, id);
  unwrap(await stub.view());
  const url = new URL(req.url);
  url.pathname = path; // the query goes along: `?after=` resumes (docs/decisions/111)
  return stub.fetch(forwardedSubscription(req, url, expiresAt));
}

invocationRoutes.get("/:id/socket", async (c) => {
  const id = idParam(c.req.param("id"));
  const expiresAt = await authorizeReader(c.req.raw, c.env, id);
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    return errorResponse(
      {
        code: "upgrade_required",
        message:
          "this route is a WebSocket; connect with Upgrade: websocket (or use /events for SSE)",
        status: 426,
      },
      { Upgrade: "websocket" },
    );
  }
  return subscribe(c.req.raw, c.env, id, "/socket", expiresAt);
});

invocationRoutes.get("/:id/events", async (c) => {
  const id = idParam(c.req.param("id"));
  const expiresAt = await authorizeReader(c.req.raw, c.env, id);
  return subscribe(c.req.raw, c.env, id, "/events", expiresAt);
});
