/**
 * The Toolwire Worker: a Hono app in front of the Invocation Durable Objects.
 * Every error, including unknown routes and wrong methods, has the one shape
 * `{ "error": { "code", "message" } }`.
 */
import { Hono } from "hono";
import { methodNotAllowed } from "hono/method-not-allowed";
import { apiError, messageOf, workerConfig } from "../protocol/index.ts";
import { isExampleTool, listTools } from "../tools/index.ts";
import { anyAgent, authorizeSubscriber, requireApiConfigured, TokenRefused } from "./auth.ts";
import { errorPage, pageSubject, prefersHtml } from "./error-page.ts";
import { ApiException, errorResponse } from "./errors.ts";
import { invocationRoutes } from "./invocation-routes.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { mcpRoute, mcpTools } from "./mcp-route.ts";
import { servePage } from "./pages.ts";
import { poolWarmUp } from "./pool-warm-up.ts";
import { previewHostForm, previewPathForm } from "./preview-proxy.ts";
import { previewRoutes } from "./preview-routes.ts";
import { runPage, runRoutes } from "./run-routes.ts";
import { sandboxRoutes } from "./sandbox-routes.ts";
import { invocationIdParam, parseWith } from "./schemas.ts";
import { invocationStream, streamRoutes } from "./stream-routes.ts";
import { testControlRoutes } from "./test-control-routes.ts";

/** Path of the viewer page among the static assets (written to public/ by the client). */
const VIEWER_ASSET = "/viewer.html";

export const app = new Hono<{ Bindings: Env }>();

// Preview URLs' host form first: every path and method of `<token>.<domain>` is the app's.
app.use("*", previewHostForm);
app.use(
  methodNotAllowed({
    app,
    onMethodNotAllowed: (c, methods) =>
      errorResponse(
        apiError(
          "method_not_allowed",
          `${c.req.method} is not allowed on ${c.req.path}; use ${methods.join(" or ")}`,
        ),
        { Allow: methods.join(", ") },
      ),
  }),
);

app.use("*", poolWarmUp);

app.get("/healthz", (c) => c.json({ ok: true }));

app.use("/v1/*", async (c, next) => {
  requireApiConfigured(c.env);
  await next();
});

app.get("/v1/tools", anyAgent, async (c) => {
  const { exampleTools } = workerConfig(c.env);
  const offered = listTools().filter((t) => exampleTools || !isExampleTool(t.name));
  const tools = offered.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    output: t.output,
    replaySafe: t.replaySafe,
    ...(isExampleTool(t.name) ? { example: true } : {}),
  }));
  return c.json({ tools });
});

app.route("/v1/invocations", invocationStream);
app.route("/v1/invocations", invocationRoutes);
app.route("/v1/stream", streamRoutes);
app.route("/v1/runs", runRoutes);
app.route("/v1/sandboxes", previewRoutes);
app.route("/v1/sandboxes", sandboxRoutes);
app.route("/p", previewPathForm);
app.route("/v1/test", testControlRoutes);
app.get("/run/:runId", runPage);

app.route("/mcp", mcpRoute());
// MCP in one created sandbox: every call of the session runs there (docs/sandboxes.md).
app.route("/mcp/sandboxes/:sandbox", mcpRoute());
// MCP with a sandbox per session, made with it and removed with it (decision 222).
app.route("/mcp/sandbox/new", mcpRoute(undefined, mcpTools, { ownSandbox: true }));

app.get("/view/:id", async (c) => {
  const id = parseWith(invocationIdParam, c.req.param("id"), "path.id");
  await authorizeSubscriber(c.env, c.req.query("token"), id);
  // A retired or never-created call is said here, not by a page that loads to say it.
  unwrap(await invocationStub(c.env, id).view());
  return servePage(c.env, c.req.url, VIEWER_ASSET, "the viewer page");
});

app.notFound((c) => {
  const error = apiError(
    "not_found",
    `no route ${c.req.method} ${c.req.path}; see the README for the API`,
  );
  const subject = pageSubject(c.req.path);
  if (subject && prefersHtml(c.req.raw)) return errorPage(subject, error, null);
  return errorResponse(error);
});

app.onError((err, c) => {
  const subject = pageSubject(c.req.path);
  if (subject && prefersHtml(c.req.raw)) {
    const error = err instanceof ApiException ? err.error : apiError("internal", "internal error");
    if (!(err instanceof ApiException)) console.error(`${c.req.method} ${c.req.path} failed`, err);
    return errorPage(subject, error, err instanceof TokenRefused ? err.problem : null);
  }
  if (err instanceof ApiException) {
    const challenge: Record<string, string> =
      err.error.status === 401 ? { "WWW-Authenticate": 'Bearer realm="toolwire"' } : {};
    return errorResponse(err.error, { ...err.headers, ...challenge });
  }
  console.error(`${c.req.method} ${c.req.path} failed`, err);
  return errorResponse(apiError("internal", `internal error: ${messageOf(err)}`));
});
