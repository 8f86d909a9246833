/**
 * The way in for HTTP (decision 182): `/sandboxes/:id/v1/preview/:port/<path>` carries a
 * request, body streamed, to the app listening on `port` of that sandbox's own loopback,
 * through its bridge's host-only socket (`SandboxNetwork.connectInto`), and streams the
 * app's answer back as it comes (SSE included). Behind the host's bearer token: only the
 * Worker, which checked the preview URL, calls it. WebSockets take `preview-upgrade.ts`.
 */
import { type IncomingMessage, request, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Context, Hono } from "hono";
import { PREVIEW_REFUSAL_HEADER, portProblem } from "../../src/protocol/preview.ts";
import { errorBody, SandboxError } from "../errors.ts";
import type { SandboxSet } from "../sandboxes/sandbox-set.ts";
import { appHeaders, isHopHeader } from "./preview-head.ts";
import { connectApp } from "./preview-target.ts";

/**
 * Mounted among the created sandboxes' routes, before the catch-all to their own apps.
 * @example app.route("/", previewRoutes(set));
 */
export function previewRoutes(set: SandboxSet): Hono {
  const app = new Hono();
  // The host's own refusals are marked, so the Worker never mistakes an app's 404 or 502 for one.
  app.onError((err, c) => {
    const known =
      err instanceof SandboxError
        ? err
        : new SandboxError("internal", `sandbox host error: ${err.message}`);
    c.header(PREVIEW_REFUSAL_HEADER, known.code);
    return c.json(errorBody(known), known.status);
  });
  const handle = (c: Context) => forward(c, set);
  app.all("/sandboxes/:id/v1/preview/:port", handle);
  app.all("/sandboxes/:id/v1/preview/:port/*", handle);
  return app;
}

async function forward(c: Context, set: SandboxSet): Promise<Response> {
  const id = c.req.param("id")!;
  const port = Number(c.req.param("port"));
  const problem = portProblem(port);
  if (problem) throw new SandboxError("bad_request", problem);
  const { incoming, outgoing } = c.env as { incoming: IncomingMessage; outgoing: ServerResponse };
  const url = new URL(c.req.url);
  const target = url.pathname.slice(`/sandboxes/${id}/v1/preview/${port}`.length) || "/";
  const socket = await connectApp(set, id, port);
  const toApp = request({
    // The bridge hands the socket over paused; the client's parser reads it from here on.
    createConnection: () => socket.resume(),
    method: c.req.method,
    path: `${target}${url.search}`,
    headers: appHeaders(incoming.rawHeaders, port, false).flat(),
  });
  const answer = new Promise<IncomingMessage>((resolve, reject) => {
    toApp.once("response", resolve);
    toApp.once("error", (err) =>
      reject(
        new SandboxError(
          "no_listener",
          `the app on port ${port} of sandbox ${id} closed the connection without an answer (${err.message})`,
        ),
      ),
    );
  });
  // The visitor's body goes on as the app reads it: nothing is held here.
  const visitorBody = c.req.raw.body;
  if (visitorBody) {
    Readable.fromWeb(visitorBody as import("node:stream/web").ReadableStream)
      .on("error", () => toApp.destroy())
      .pipe(toApp);
  } else toApp.end();
  // A visitor that goes away takes the app's connection with it.
  // (The request's own `close` comes as soon as its body is read, so the answer's is watched.)
  outgoing.once("close", () => toApp.destroy());
  const res = await answer;
  // The app's answer is piped straight into the node response: no web stream between
  // them (BENCHMARKS.md: 18 → 43–47 MiB/s through a preview URL against `Readable.toWeb`).
  const headers: string[] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i]!;
    if (!isHopHeader(name)) headers.push(name, res.rawHeaders[i + 1]!);
  }
  outgoing.writeHead(res.statusCode ?? 502, res.statusMessage, headers);
  res.pipe(outgoing);
  res.once("error", () => outgoing.destroy());
  return RESPONSE_ALREADY_SENT;
}
