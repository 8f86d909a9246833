/**
 * `GET /v1/invocations/:id/spill`: the complete output of a bash invocation whose view
 * was cut, streamed from its sandbox host's spill file (`GET /v1/exec/:execId/spill`).
 *
 * The Worker passes the body through as a stream: it never holds the file, whatever its
 * size. `Range` is forwarded, so 206 and 416 are the host's answers about the file's
 * current size. `?download=1` asks for `Content-Disposition: attachment`.
 */
import type { Context } from "hono";
import { execIdFor, fetchIdempotent, resolveSandbox } from "../execenv/index.ts";
import { errorBodyMessage, type InvocationView, messageOf } from "../protocol/index.ts";
import { raise } from "./errors.ts";
import type { Routes } from "./invocation-context.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";

/** Headers the host answers with that describe the bytes; everything else is dropped. */
const PASSED_HEADERS = ["content-length", "content-range", "accept-ranges"] as const;

/**
 * The route handler, mounted behind the invocation routes' id and reader middleware.
 * @example invocationRoutes.get("/:id/spill", withId, reader, spillRoute)
 */
export async function spillRoute(c: Context<Routes>): Promise<Response> {
  const id = c.get("id");
  const view = unwrap(await invocationStub(c.env, id).view());
  const spillPath = view.state.truncation.spillPath;
  if (spillPath === undefined) raise("not_found", noSpill(id, view));
  const target = unwrap(resolveSandbox(c.env, view.sandbox));
  const execId = await execIdFor(id);
  const forwarded = new Headers({ Authorization: `Bearer ${target.token}` });
  const range = c.req.header("Range");
  if (range !== undefined) forwarded.set("Range", range);
  let host: Response;
  try {
    host = await fetchIdempotent(
      target.fetch,
      `${target.url}/v1/exec/${encodeURIComponent(execId)}/spill`,
      { headers: forwarded, signal: c.req.raw.signal },
    );
  } catch (err) {
    raise(
      "sandbox_unreachable",
      `sandbox "${view.sandbox}" at ${target.url} did not answer for ${spillPath} after 5 attempts over 1.5 s (${messageOf(err)}); check that the sandbox host is running`,
    );
  }
  if (host.status === 404) {
    await host.body?.cancel();
    raise(
      "not_found",
      `the sandbox "${view.sandbox}" no longer has ${spillPath} (removed from the sandbox); the invocation's own output is all that is kept`,
    );
  }
  if (host.status === 416) {
    const size = host.headers.get("content-range") ?? "bytes */0";
    const message = await hostMessage(host);
    raise("range_not_satisfiable", message, { "Content-Range": size });
  }
  if (host.status !== 200 && host.status !== 206) {
    const message = await hostMessage(host);
    raise(
      "sandbox_unreachable",
      `sandbox "${view.sandbox}" refused ${spillPath} (${host.status}: ${message})`,
    );
  }
  const headers = new Headers({
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Disposition": `${c.req.query("download") === "1" ? "attachment" : "inline"}; filename="${execId}.log"`,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    // Opened as a page, the bytes can run nothing and reach nothing.
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Referrer-Policy": "no-referrer",
  });
  for (const name of PASSED_HEADERS) {
    const value = host.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(host.body, { status: host.status, headers });
}

function noSpill(id: string, view: InvocationView): string {
  if (view.tool !== "bash") {
    return `invocation ${id} runs ${view.tool}, which writes no spill file; its output is all there is`;
  }
  const t = view.state.truncation;
  return `invocation ${id} has no spill file: its output (${count(t.totalLines, "line")}, ${count(t.totalBytes, "byte")}) fits in its window${view.status === "running" ? " so far" : ""}, so GET /v1/invocations/${id} holds all of it`;
}

function count(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

async function hostMessage(res: Response): Promise<string> {
  const text = await res.text();
  return errorBodyMessage(text) ?? text.slice(0, 200);
}
