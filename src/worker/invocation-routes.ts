/**
 * The `/v1/invocations` routes: create, read, long-poll the result, cancel, subscribe
 * (WebSocket or SSE, forwarded to the DO) and the producer API for agent-side tools.
 */
import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { JsonValue } from "../core/chord/types.ts";
import { checkSandboxName, DEFAULT_SANDBOX } from "../execenv/index.ts";
import {
  forwardedSubscription,
  type InvocationView,
  messageOf,
  NEW_SANDBOX,
  type StartRequest,
  type SubscriptionPath,
  workerConfig,
} from "../protocol/index.ts";
import {
  firstMoment,
  getTool,
  inputDetails,
  inputStateOf,
  isBackgroundCall,
  isExampleTool,
  listTools,
  outputLines,
  scopedCall,
  ToolArgsError,
} from "../tools/index.ts";
import {
  anyAgent,
  principalOf,
  readerOf,
  refuseSandboxToken,
  sandboxScope,
  subscribeSecret,
} from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { raise } from "./errors.ts";
import type { Routes } from "./invocation-context.ts";
import { invocationLinks } from "./invocation-links.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { noStore } from "./no-store.ts";
import { parseProducerBody } from "./producer-calls.ts";
import { runIdOf, runLinks } from "./run-routes.ts";
import { runSandbox } from "./run-sandbox.ts";
import { sameJson } from "./same-json.ts";
import { useSandbox } from "./sandbox-routes.ts";
import { createInvocationBody, invocationIdParam, parseWith, waitQuery } from "./schemas.ts";
import { spillRoute } from "./spill-route.ts";
import { attachRoute, inputRoute, paintRoute, resizeRoute, typist } from "./terminal-routes.ts";

export const invocationRoutes = new Hono<Routes>();
invocationRoutes.use("*", noStore);

/** The route's `:id`, validated (400 naming `path.id`) before anything else looks at it. */
const withId = createMiddleware<Routes>(async (c, next) => {
  c.set("id", parseWith(invocationIdParam, c.req.param("id"), "path.id"));
  await next();
});

/** Reads of one invocation: a bearer token, or that invocation's subscribe token. */
const reader = readerOf<Routes>((c) => c.get("id"));

/**
 * After the auth middleware: a sandbox token reaches the calls of its sandbox only; any
 * other id is the 404 of one that never existed (`scopedCall`, decision 251).
 */
const inScope = createMiddleware<Routes>(async (c, next) => {
  const sandbox = sandboxScope(principalOf(c));
  if (sandbox !== null) unwrap(await scopedCall(c.env, c.get("id"), sandbox).view());
  await next();
});

function publicView(id: string, view: InvocationView) {
  return { ...view, id, toolCallId: id };
}

/**
 * A known `toolCallId` is the same invocation only for the same tool, args and sandbox;
 * anything else is a 409 that names the first field that differs.
 */
export function refuseOtherCall(stored: InvocationView, request: StartRequest): void {
  const id = `toolCallId "${request.toolCallId}"`;
  const advice = "use a new toolCallId";
  if (stored.tool !== request.tool) {
    raise("conflict", `${id} already names an invocation of ${stored.tool}; ${advice}`);
  }
  if (!sameJson(stored.args, request.args)) {
    raise(
      "conflict",
      `${id} already names an invocation of ${stored.tool} with other args; ${advice}`,
    );
  }
  if (stored.sandbox !== request.sandbox) {
    raise(
      "conflict",
      `${id} already names an invocation on sandbox "${stored.sandbox}", not "${request.sandbox}"; ${advice}`,
    );
  }
}

invocationRoutes.post("/", anyAgent, async (c) => {
  // Read before anything is made: a bad wait is a 400 that starts nothing.
  const waitSeconds = parseWith(waitQuery, c.req.query("wait"), "query.wait") ?? 0;
  const body = parseWith(createInvocationBody, await readJsonBody(c.req.raw), "body");
  const found = getTool(body.tool);
  // The examples run only where EXAMPLE_TOOLS is on; elsewhere they are unknown tools.
  const tool =
    found && isExampleTool(found.name) && !workerConfig(c.env).exampleTools ? undefined : found;
  if (tool === undefined) {
    const known = listTools()
      .filter((t) => !isExampleTool(t.name))
      .map((t) => t.name)
      .join(", ");
    raise("bad_request", `body.tool: unknown tool "${body.tool}" (known: ${known})`);
  }
  const args = (body.args ?? {}) as JsonValue;
  let params: unknown;
  try {
    params = tool.parse(args);
  } catch (err) {
    // `parse` throws only for bad input (ToolDefinition's contract), whoever wrote the tool.
    const message = messageOf(err);
    raise(
      "bad_request",
      err instanceof ToolArgsError ? `${tool.name} ${message}` : `${tool.name} args: ${message}`,
    );
  }
  // A sandbox token's calls run in its sandbox, which they need not name (decision 250);
  // it makes no sandbox of its own (`new`, decision 221).
  const confined = sandboxScope(principalOf(c));
  const ownSandbox = body.sandbox === NEW_SANDBOX;
  if (confined !== null && ownSandbox) refuseSandboxToken(confined);
  if (ownSandbox && body.runId === undefined) {
    raise(
      "bad_request",
      'body.sandbox: "new" needs a runId: the run owns the sandbox it makes and its later calls find it again',
    );
  }
  const sandbox = ownSandbox
    ? await runSandbox(c.env, runIdOf(principalOf(c), body.runId as string))
    : (body.sandbox ?? confined ?? DEFAULT_SANDBOX);
  if (confined !== null && sandbox !== confined) refuseSandboxToken(confined);
  unwrap(checkSandboxName(c.env, sandbox));
  subscribeSecret(c.env);

  const toolCallId = body.toolCallId ?? `call_${crypto.randomUUID().replaceAll("-", "")}`;
  const hostLoad = tool.sandbox ? await useSandbox(c.env, sandbox, toolCallId) : null;
  const request: StartRequest = {
    tool: tool.name,
    args,
    params,
    toolCallId,
    runId: body.runId === undefined ? toolCallId : runIdOf(principalOf(c), body.runId),
    turnId: body.turnId ?? toolCallId,
    sandbox,
    ...(hostLoad ? { hostLoad } : {}),
  };
  const stub = invocationStub(c.env, toolCallId);
  const { created, view } = unwrap(await stub.start(request));
  if (!created && confined !== null && view.sandbox !== confined) {
    // Said without a word about the call that holds the id: it is another sandbox's.
    raise("conflict", `toolCallId "${toolCallId}" is taken; use a new toolCallId`);
  }
  if (!created) refuseOtherCall(view, request);
  // A background bash call answers after its first moment with what it printed.
  const first = isBackgroundCall(request)
    ? await firstMoment(
        {
          result: (waitMs) => stub.result(waitMs),
          view: () => stub.view(),
          commitRead: (reader, range) => stub.commitRead(reader, range),
          lines: (at, range) => outputLines(c.env, at, range),
          input: (at) => inputStateOf(c.env, at),
        },
        toolCallId,
      )
    : null;
  // `?wait=S`: the call's result in this answer when it settles within S seconds, as
  // `GET …/result?wait=S` would give it; one request from nothing to a result.
  const poll = waitSeconds > 0 ? unwrap(await stub.result(Math.round(waitSeconds * 1000))) : null;
  const settled = poll?.status === "settled" ? poll.result : null;
  const response = {
    id: toolCallId,
    toolCallId,
    status: settled ? ("settled" as const) : (first?.view.status ?? view.status),
    ...(ownSandbox ? { sandbox } : {}),
    ...(first
      ? {
          firstMoment: {
            text: first.text,
            shown: first.shown,
            note: first.note,
            ...inputDetails(first.input),
          },
        }
      : {}),
    ...(settled ? { result: settled } : {}),
    ...(await invocationLinks(c.req.raw, c.env, toolCallId)),
    ...(request.runId !== toolCallId ? await runLinks(c.req.raw, c.env, request.runId) : {}),
  };
  return c.json(response, created ? 201 : 200);
});

invocationRoutes.get("/:id", withId, reader, inScope, async (c) => {
  const id = c.get("id");
  const view = unwrap(await invocationStub(c.env, id).view());
  return c.json(publicView(id, view));
});

/**
 * Fresh links (a new subscribe token) for a call that exists: what `toolwire link <id>`
 * prints when a viewer link has expired. A bearer token only: a subscribe token that
 * could mint its successor would never expire.
 */
invocationRoutes.get("/:id/links", withId, anyAgent, inScope, async (c) => {
  const id = c.get("id");
  unwrap(await invocationStub(c.env, id).view());
  return c.json({ id, ...(await invocationLinks(c.req.raw, c.env, id)) });
});

invocationRoutes.get("/:id/result", withId, reader, inScope, async (c) => {
  const id = c.get("id");
  const waitSeconds = parseWith(waitQuery, c.req.query("wait"), "query.wait") ?? 0;
  const poll = unwrap(await invocationStub(c.env, id).result(Math.round(waitSeconds * 1000)));
  if (poll.status === "settled") return c.json(poll.result, 200);
  return c.json({ status: "running" as const }, 202);
});

invocationRoutes.post("/:id/cancel", withId, anyAgent, inScope, async (c) => {
  const id = c.get("id");
  const view = unwrap(await invocationStub(c.env, id).cancel());
  return c.json(publicView(id, view));
});

invocationRoutes.post("/:id/output", withId, anyAgent, inScope, async (c) => {
  const id = c.get("id");
  const { calls, end, seq } = parseProducerBody(await readJsonBody(c.req.raw));
  const view = unwrap(await invocationStub(c.env, id).produce(calls, end, seq));
  return c.json(publicView(id, view));
});

/**
 * Forwards a subscription to the DO, which answers it, or a 404 in the API's error shape
 * when it holds no invocation (no `view()` round trip first). The query goes along
 * (`?after=` resumes, docs/decisions/111), with the subscribe token's expiry (unix
 * seconds; null for the bearer token, docs/decisions/112).
 */
function subscribe(c: Context<Routes>, path: SubscriptionPath) {
  const url = new URL(c.req.url);
  url.pathname = path;
  const principal = principalOf(c);
  const credential =
    principal?.kind === "sandbox" ? { sandbox: principal.sandbox, nonce: principal.nonce } : null;
  const forwarded = forwardedSubscription(c.req.raw, url, c.get("credentialExpiresAt"), credential);
  return invocationStub(c.env, c.get("id")).fetch(forwarded);
}

invocationRoutes.get("/:id/socket", withId, reader, inScope, async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    raise(
      "upgrade_required",
      "this route is a WebSocket; connect with Upgrade: websocket (or use /events for SSE)",
      { Upgrade: "websocket" },
    );
  }
  return subscribe(c, "/socket");
});

invocationRoutes.get("/:id/events", withId, reader, inScope, async (c) => subscribe(c, "/events"));

invocationRoutes.get("/:id/spill", withId, reader, inScope, spillRoute);

// A tty call's terminal for people (terminal-routes.ts, decision 191).
invocationRoutes.post("/:id/attach", withId, anyAgent, inScope, attachRoute);
invocationRoutes.get("/:id/terminal", withId, reader, inScope, paintRoute);
invocationRoutes.post("/:id/terminal/input", withId, typist, inputRoute);
invocationRoutes.post("/:id/terminal/resize", withId, typist, resizeRoute);
