/**
 * Serving a preview URL (decision 182): the token is checked here (signature, expiry),
 * its grant in the Sandbox DO (not revoked, sandbox active), and the request goes on to
 * the sandbox host's way in, `/sandboxes/:id/v1/preview/:port/<path>`, bodies streamed
 * both ways. A WebSocket is joined message by message, so that when the sandbox ends under
 * it the visitor is told why in the close frame. The token never goes on: not in the
 * path, nor in `Host`, `Origin` or `Referer`; the visitor's `Authorization` does.
 * Refusals are a page for a person and JSON for a client (error-page.ts).
 */
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { sandboxTable } from "../execenv/index.ts";
import { hostOf } from "../execenv/sandbox-host-api.ts";
import { CONTAINER_PLACEMENT } from "../execenv/sandbox-routing.ts";
import {
  type ApiError,
  apiError,
  type ErrorCode,
  messageOf,
  workerConfig,
} from "../protocol/index.ts";
import { PREVIEW_AUTHORIZATION_HEADER, PREVIEW_REFUSAL_HEADER } from "../protocol/preview.ts";
import { PREVIEW_TOKEN, type PreviewClaim, verifyPreviewToken } from "../protocol/preview-token.ts";
import { subscribeSecret } from "./auth.ts";
import { errorPage, prefersHtml } from "./error-page.ts";
import { ApiException, errorResponse, raise } from "./errors.ts";
import { unwrap } from "./invocation-stub.ts";
import { sandboxPorts } from "./preview-routes.ts";

/** How a preview was addressed: `/p/<token>/…` on the Worker's origin, or `<token>.<domain>`. */
type PreviewForm = "path" | "host";

/**
 * The token of a host-form request (`<token>.localhost[:port]` or `<token>.<domain>`), or null.
 * @example previewHostToken("k3…q.localhost:8787", undefined) // "k3…q"
 */
function previewHostToken(host: string | undefined, domain: string | undefined): string | null {
  if (!host) return null;
  const name = host.toLowerCase().replace(/:\d+$/, "");
  const dot = name.indexOf(".");
  if (dot < 0) return null;
  const [label, rest] = [name.slice(0, dot), name.slice(dot + 1)];
  if (!PREVIEW_TOKEN.test(label)) return null;
  return rest === "localhost" || rest === domain ? label : null;
}

/**
 * The app's answer to `req` through preview `token`; `target` is the path and query the
 * app is asked for.
 * @example return servePreview(env, c.req.raw, token, "/app.js", "host")
 */
async function servePreview(
  env: Env,
  req: Request,
  token: string,
  target: string,
  form: PreviewForm,
): Promise<Response> {
  let port: number | null = null;
  try {
    const claim = await claimOf(env, token);
    port = claim.port;
    const { host } = unwrap(
      await sandboxPorts(env, claim.sandboxId).admit(claim.port, claim.nonce),
    );
    const upstream = hostOf(env, host);
    const { url, token: hostToken, fetch: send } = unwrap(upstream);
    const headers = appHeaders(req, claim.port, token);
    headers.set("authorization", `Bearer ${hostToken}`);
    const to = `${url}/sandboxes/${claim.sandboxId}/v1/preview/${claim.port}${target}`;
    const websocket = req.headers.get("upgrade")?.toLowerCase() === "websocket";
    let res: Response;
    try {
      res = await send(to, {
        method: req.method,
        headers,
        body: websocket ? undefined : req.body,
        redirect: "manual",
      });
    } catch (err) {
      raise("sandbox_unreachable", `the sandbox's host did not answer (${messageOf(err)})`);
    }
    const refused = res.headers.get(PREVIEW_REFUSAL_HEADER);
    if (refused !== null) throw new ApiException(await refusalOf(res, refused, claim));
    if (websocket && res.webSocket) return joinSockets(env, res.webSocket, claim);
    return answerOf(res, token, form);
  } catch (err) {
    const error =
      err instanceof ApiException
        ? err.error
        : apiError("internal", `internal error: ${messageOf(err)}`);
    if (!(err instanceof ApiException)) console.error("preview failed", err);
    return prefersHtml(req)
      ? errorPage({ kind: "preview", port }, error, null)
      : errorResponse(error);
  }
}

async function claimOf(env: Env, token: string): Promise<PreviewClaim> {
  const table = sandboxTable(env);
  const placements = [...(table.ok ? Object.keys(table.value) : []), CONTAINER_PLACEMENT];
  const check = await verifyPreviewToken(subscribeSecret(env), token, placements, Date.now());
  if (check.ok) return check.claim;
  if (check.reason === "expired")
    raise("gone", "this preview link has expired; expose the port again for a new one");
  raise(
    "not_found",
    "no preview at this address: the link is damaged or was made by another Toolwire server",
  );
}

/** The host's own refusal (never the app's): a sandbox the host no longer has is gone. */
async function refusalOf(res: Response, code: string, claim: PreviewClaim): Promise<ApiError> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  const message = body?.error?.message ?? `the sandbox host refused the preview (${res.status})`;
  if (code === "not_found") {
    return apiError(
      "gone",
      `sandbox ${claim.sandboxId} is no longer on its host; create a new one`,
    );
  }
  return apiError(code as ErrorCode, message);
}

/**
 * The visitor's headers for the app: its own `Authorization` set aside for the host to put
 * back, `Origin` and `Referer` as if the app were opened at `http://localhost:<port>`.
 */
function appHeaders(req: Request, port: number, token: string): Headers {
  const headers = new Headers(req.headers);
  for (const name of ["host", PREVIEW_AUTHORIZATION_HEADER, PREVIEW_REFUSAL_HEADER, "cookie2"]) {
    headers.delete(name);
  }
  const auth = req.headers.get("authorization");
  headers.delete("authorization");
  if (auth !== null) headers.set(PREVIEW_AUTHORIZATION_HEADER, auth);
  const local = `http://localhost:${port}`;
  for (const name of ["origin", "referer"]) {
    const value = headers.get(name);
    if (value === null || !value.includes(token)) continue;
    const url = URL.canParse(value) ? new URL(value) : null;
    const path = url ? url.pathname.replace(`/p/${token}`, "") : "";
    headers.set(name, name === "origin" ? local : `${local}${path || "/"}${url?.search ?? ""}`);
  }
  return headers;
}

/** The app's answer as it came; in the path form a `Location` at the root stays under `/p/<token>`. */
function answerOf(res: Response, token: string, form: PreviewForm): Response {
  const headers = new Headers(res.headers);
  const location = headers.get("location");
  if (form === "path" && location?.startsWith("/") && !location.startsWith("//")) {
    headers.set("location", `/p/${token}${location}`);
  }
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/** Close codes a Worker may send; others (1005, 1006, 1015) are said as 1011 or 1000. */
function sendableCode(code: number): number {
  if (code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014))
    return code;
  return code >= 3000 && code <= 4999 ? code : 1000;
}

/** A close reason fits in 123 bytes: the refusal's first clause. */
function reasonOf(message: string): string {
  const first = message.split(/ \(at |; /)[0] ?? message;
  return new TextEncoder().encode(first).length <= 123 ? first : `${first.slice(0, 119)}…`;
}

/**
 * The visitor's WebSocket, joined to the app's message by message. When the app's side
 * ends, the Sandbox DO is asked first: a sandbox that no longer lets previews in closes
 * the visitor's with its reason, however the end came (through a container's Durable
 * Object, a container stopped under it reads as a close). Otherwise an app's close is
 * passed on, and a connection that just ended (the app died) is a 1011.
 */
function joinSockets(env: Env, app: WebSocket, claim: PreviewClaim): Response {
  const [visitor, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  app.accept();
  server.addEventListener("message", (e) => app.send(e.data));
  app.addEventListener("message", (e) => server.send(e.data));
  server.addEventListener("close", (e) => app.close(sendableCode(e.code), e.reason));
  const ended = async (clean: boolean, code: number, reason: string) => {
    const admitted = await sandboxPorts(env, claim.sandboxId)
      .admit(claim.port, claim.nonce)
      .catch((err: unknown) => ({
        ok: false as const,
        error: apiError("internal", messageOf(err)),
      }));
    if (!admitted.ok) server.close(1001, reasonOf(admitted.error.message));
    else if (clean) server.close(sendableCode(code), reason);
    else server.close(1011, `the app on port ${claim.port} ended the connection`);
  };
  app.addEventListener("close", (e) => void ended(e.wasClean && e.code !== 1006, e.code, e.reason));
  app.addEventListener("error", () => void ended(false, 1006, ""));
  return new Response(null, { status: 101, webSocket: visitor });
}

/**
 * Middleware, first in the app: a request to `<token>.localhost` or `<token>.<PREVIEW_DOMAIN>`
 * is the app's, whatever its path and method; anything else goes on to the API.
 * @example app.use("*", previewHostForm);
 */
export const previewHostForm = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  const domain = workerConfig(c.env).previewDomain;
  const url = new URL(c.req.url);
  // The Host header as sent; a request handed to the Worker in-process has only its URL.
  const token =
    previewHostToken(c.req.header("host"), domain) ?? previewHostToken(url.host, domain);
  if (token === null) return next();
  return servePreview(c.env, c.req.raw, token, `${url.pathname}${url.search}`, "host");
});

/**
 * The path form, `/p/<token>/…`; `/p/<token>` alone is sent on to `/p/<token>/` so that
 * a page's relative links resolve under it.
 * @example app.route("/p", previewPathForm);
 */
export const previewPathForm = new Hono<{ Bindings: Env }>();
previewPathForm.all("/:token/*", (c) => {
  const token = c.req.param("token");
  const url = new URL(c.req.url);
  const rest = url.pathname.slice(`/p/${token}`.length);
  if (rest === "") return c.redirect(`/p/${token}/${url.search}`, 308);
  return servePreview(c.env, c.req.raw, token, `${rest}${url.search}`, "path");
});
