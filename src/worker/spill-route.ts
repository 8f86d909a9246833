/**
 * `GET /v1/invocations/:id/spill`: the complete output of a call. A bash call's is
 * streamed from its sandbox host's spill file (`GET /v1/exec/:execId/spill`), or, once
 * the host removed the file because the output fit, taken from the settled text; any
 * other call's is its Durable Stream's bytes (decision 200).
 *
 * The Worker passes the body through as a stream: it never holds the file, whatever its
 * size. `Range` is forwarded, so 206 and 416 are the host's answers about the file's
 * current size. `?download=1` asks for `Content-Disposition: attachment`.
 */
import type { Context } from "hono";
import { execIdFor, fetchIdempotent, resolveSandbox } from "../execenv/index.ts";
import { concatBytes } from "../protocol/bytes.ts";
import { HEADER } from "../protocol/durable-streams/index.ts";
import { errorBodyMessage, messageOf } from "../protocol/index.ts";
import { raise } from "./errors.ts";
import type { Routes } from "./invocation-context.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { keptBytes } from "./spill-source.ts";

/** Headers the host answers with that describe the bytes; everything else is dropped. */
const PASSED_HEADERS = ["content-length", "content-range", "accept-ranges"] as const;

/**
 * The route handler, mounted behind the invocation routes' id and reader middleware.
 * @example invocationRoutes.get("/:id/spill", withId, reader, spillRoute)
 */
export async function spillRoute(c: Context<Routes>): Promise<Response> {
  const id = c.get("id");
  const view = unwrap(await invocationStub(c.env, id).view());
  const spillPath = view.state.truncation.spillPath ?? "the output";
  if (view.tool !== "bash") return outputAnswer(c, await streamBytes(c.env, c.req.url, id), id);
  if (view.state.truncation.spillPath === undefined && view.status === "settled") {
    return outputAnswer(c, keptBytes(view), id);
  }
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
  const headers = outputHeaders(c, execId);
  for (const name of PASSED_HEADERS) {
    const value = host.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(host.body, { status: host.status, headers });
}

function outputHeaders(c: Context<Routes>, name: string): Headers {
  return new Headers({
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Disposition": `${c.req.query("download") === "1" ? "attachment" : "inline"}; filename="${name}.log"`,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    // Opened as a page, the bytes can run nothing and reach nothing.
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Referrer-Policy": "no-referrer",
  });
}

/** A whole output the Worker holds (a small call's): 200, `Range` not applied. */
function outputAnswer(c: Context<Routes>, bytes: Uint8Array<ArrayBuffer>, id: string): Response {
  const headers = outputHeaders(c, id);
  headers.set("Content-Length", String(bytes.byteLength));
  return new Response(bytes, { status: 200, headers });
}

/** Every byte of a non-bash call's Durable Stream so far, read from its object in chunks. */
async function streamBytes(env: Env, url: string, id: string): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let offset = "-1";
  for (;;) {
    const at = new URL(url);
    at.pathname = "/stream";
    at.search = `?offset=${offset}`;
    const res = await invocationStub(env, id).fetch(new Request(at));
    if (res.status !== 200) raise("not_found", `invocation ${id} has no output to read`);
    chunks.push(new Uint8Array(await res.arrayBuffer()));
    offset = res.headers.get(HEADER.nextOffset) ?? offset;
    if (res.headers.get(HEADER.upToDate) === "true") break;
  }
  return concatBytes(chunks);
}

async function hostMessage(res: Response): Promise<string> {
  const text = await res.text();
  return errorBodyMessage(text) ?? text.slice(0, 200);
}
