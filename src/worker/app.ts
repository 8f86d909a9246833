/**
 * The Toolwire Worker: a Hono app in front of the Invocation Durable Objects.
 * Every error, including unknown routes and wrong methods, has the one shape
 * `{ "error": { "code", "message" } }`.
 */
import { Hono } from "hono";
import { methodNotAllowed } from "hono/method-not-allowed";
import { listTools } from "../tools/index.ts";
import { authorizeAgent, authorizeSubscriber, requireApiConfigured } from "./auth.ts";
import { ApiException, errorResponse, fail } from "./errors.ts";
import { invocationRoutes } from "./invocation-routes.ts";
import { invocationIdParam, parseWith } from "./schemas.ts";

/** Path of the viewer page among the static assets (written to public/ by the client). */
export const VIEWER_ASSET = "/viewer.html";

export const app = new Hono<{ Bindings: Env }>();

app.use(
  methodNotAllowed({
    app,
    onMethodNotAllowed: (c, methods) =>
      errorResponse(
        {
          code: "method_not_allowed",
          message: `${c.req.method} is not allowed on ${c.req.path}; use ${methods.join(" or ")}`,
          status: 405,
        },
        { Allow: methods.join(", ") },
      ),
  }),
);

app.get("/healthz", (c) => c.json({ ok: true }));

app.use("/v1/*", async (c, next) => {
  requireApiConfigured(c.env);
  await next();
});

app.get("/v1/tools", async (c) => {
  await authorizeAgent(c.req.raw, c.env);
  const tools = listTools().map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    output: t.output,
    replaySafe: t.replaySafe,
  }));
  return c.json({ tools });
});

app.route("/v1/invocations", invocationRoutes);

app.get("/view/:id", async (c) => {
  const id = parseWith(invocationIdParam, c.req.param("id"), "path.id");
  await authorizeSubscriber(c.env, c.req.query("token"), id);
  const page = await c.env.ASSETS.fetch(new Request(new URL(VIEWER_ASSET, c.req.url)));
  if (!page.ok)
    fail(
      "not_configured",
      `the viewer page ${VIEWER_ASSET} is missing from the assets; build it with node scripts/build-client.ts`,
    );
  const headers = new Headers(page.headers);
  // The URL carries a token: keep it out of caches and of Referer headers.
  headers.set("Cache-Control", "no-store");
  headers.set("Referrer-Policy", "no-referrer");
  // No origin may frame the page (clickjacking); a meta CSP cannot say this, a header can.
  headers.set("Content-Security-Policy", "frame-ancestors 'none'");
  headers.set("X-Frame-Options", "DENY");
  return new Response(page.body, { status: 200, headers });
});

app.notFound((c) =>
  errorResponse({
    code: "not_found",
    message: `no route ${c.req.method} ${c.req.path}; see the README for the API`,
    status: 404,
  }),
);

app.onError((err, c) => {
  if (err instanceof ApiException) {
    const headers: Record<string, string> =
      err.error.status === 401 ? { "WWW-Authenticate": 'Bearer realm="toolwire"' } : {};
    return errorResponse(err.error, headers);
  }
  console.error(`${c.req.method} ${c.req.path} failed`, err);
  return errorResponse({
    code: "internal",
    message: `internal error: ${err instanceof Error ? err.message : String(err)}`,
    status: 500,
  });
});
