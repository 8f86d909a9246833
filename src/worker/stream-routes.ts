/**
 * Durable Streams on the Worker (docs/protocol.md#durable-streams, decisions 200-203):
 * `/v1/stream/:name` (create, append, read, close, delete; the protocol's own path) and
 * `GET|HEAD /v1/invocations/:id/stream` (any call's complete output). The Worker checks
 * the credential and answers bash calls from their spill (spill-source.ts); everything
 * else is answered by the call's Durable Object.
 */
import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import {
  answerRead,
  appendTooLarge,
  MAX_APPEND_BYTES,
  PREFLIGHT_HEADERS,
  SECURITY_HEADERS,
} from "../protocol/durable-streams/index.ts";
import { workerConfig } from "../protocol/index.ts";
import { scopedCall } from "../tools/index.ts";
import { authorizeOperator, authorizeReader, sandboxScope } from "./auth.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { invocationIdParam, parseWith } from "./schemas.ts";
import { spillSource } from "./spill-source.ts";

type StreamRoutes = { Bindings: Env; Variables: { id: string } };

/** Every answer of a stream route, refusals included, carries the stream's security headers. */
const withSecurityHeaders = createMiddleware<StreamRoutes>(async (c, next) => {
  await next();
  const missing = Object.entries(SECURITY_HEADERS).filter(([name]) => !c.res.headers.has(name));
  if (missing.length === 0) return;
  const res = new Response(c.res.body, c.res);
  for (const [name, value] of missing) res.headers.set(name, value);
  c.res = res;
});

/**
 * Reads (`GET`, `HEAD`) take the operator's token, the call's subscribe token, or a
 * sandbox token for a call of its own sandbox (any other stream is not found for it,
 * decision 251); writes (`PUT`, `POST`, `DELETE`) take the operator's token alone
 * (decision 203): a sandbox's agent reaches no stream outside its sandbox.
 */
const streamAuth = createMiddleware<StreamRoutes>(async (c, next) => {
  const id = parseWith(invocationIdParam, c.req.param("name") ?? c.req.param("id"), "path.name");
  c.set("id", id);
  const method = c.req.method;
  if (method === "GET" || method === "HEAD") {
    const sandbox = sandboxScope((await authorizeReader(c.req.raw, c.env, id)).principal);
    if (sandbox !== null) unwrap(await scopedCall(c.env, id, sandbox).view());
  } else await authorizeOperator(c.req.raw, c.env);
  await next();
});

/** The request as the Durable Object's `/stream` takes it: same method, query, headers, body. */
async function forward(c: Context<StreamRoutes>): Promise<Response> {
  // Refused here when its length says so: the object never starts reading a body it refuses.
  if (Number(c.req.header("Content-Length") ?? 0) > MAX_APPEND_BYTES) {
    return appendTooLarge();
  }
  const url = new URL(c.req.url);
  url.pathname = "/stream";
  const answer = await invocationStub(c.env, c.get("id")).fetch(new Request(url, c.req.raw));
  if (!answer.headers.has("Location")) return answer;
  // The object does not know the public URL; the stream made is the one asked for.
  const res = new Response(answer.body, answer);
  res.headers.set("Location", c.req.url);
  return res;
}

function preflight(): Response {
  return new Response(null, {
    status: 204,
    headers: { ...SECURITY_HEADERS, ...PREFLIGHT_HEADERS },
  });
}

export const streamRoutes = new Hono<StreamRoutes>();
streamRoutes.use("*", withSecurityHeaders);
streamRoutes.options("/:name", preflight);
streamRoutes.on(["GET", "HEAD", "PUT", "POST", "DELETE"], "/:name", streamAuth, forward);

/**
 * `GET|HEAD /v1/invocations/:id/stream`: a bash call from its spill, any other from its
 * Durable Object.
 * @example invocationRoutes.on(["GET", "HEAD"], "/:id/stream", invocationStream)
 */
export const invocationStream = new Hono<StreamRoutes>();
invocationStream.options("/:id/stream", withSecurityHeaders, preflight);
invocationStream.on(["GET", "HEAD"], "/:id/stream", withSecurityHeaders, streamAuth, async (c) => {
  const id = c.get("id");
  const view = unwrap(await invocationStub(c.env, id).view());
  if (view.tool !== "bash") return forward(c);
  const source = await spillSource(c.env, id, view, c.req.raw.signal);
  return answerRead(c.req.raw, source, workerConfig(c.env).streamLongPollMs);
});
