/**
 * `GET /v1/exec/:execId/spill`: the complete raw output of one exec, read from its spill
 * file (`/toolwire/spill/<execId>.log`), whole or one byte range, streamed from disk.
 *
 * The file is opened the way it is written (spill-folder.ts, decision 160): by name in
 * the spill folder the host holds open, which no command can write, and checked through
 * its descriptor. Nothing a command plants anywhere makes the host read another file.
 */
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { Hono } from "hono";
import { EXEC_ID_PATTERN } from "../src/protocol/index.ts";
import { byteRange } from "./byte-range.ts";
import { SandboxError } from "./errors.ts";
import type { SpillFolder } from "./spill-folder.ts";

/** Read size of the file stream: large enough that a gigabyte is ~16k reads. */
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * The spill route group, to mount behind the host's auth.
 * @example app.route("/", spillRoutes(spills));
 */
export function spillRoutes(spills: SpillFolder): Hono {
  const app = new Hono();
  app.get("/v1/exec/:execId/spill", (c) =>
    spillResponse(spills, c.req.param("execId"), c.req.header("range")),
  );
  return app;
}

/**
 * The response for `GET /v1/exec/:execId/spill` with the request's `Range` header.
 * A running exec's file is served up to its size when it was opened.
 * @example spillResponse(spills, "e1", "bytes=0-99")
 */
async function spillResponse(
  spills: SpillFolder,
  execId: string,
  range: string | undefined,
): Promise<Response> {
  if (!EXEC_ID_PATTERN.test(execId)) {
    throw new SandboxError("bad_request", `'${execId}' is not an exec id ([A-Za-z0-9_-]{1,128})`);
  }
  const rel = spills.jailPath(execId);
  const file = await spills.openRead(`${execId}.log`);
  let size: number;
  try {
    size = (await file.stat()).size;
  } catch (err) {
    await file.close();
    throw err;
  }
  const headers: Record<string, string> = {
    "content-type": "text/plain; charset=utf-8",
    "accept-ranges": "bytes",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
  const wanted = byteRange(range, size);
  if (wanted.kind === "unsatisfiable" || wanted.kind === "multiple") {
    await file.close();
    const message =
      wanted.kind === "multiple"
        ? `one byte range at a time, please (got '${range}')`
        : `range '${range}' starts past the end of ${rel} (${size} bytes)`;
    return Response.json(
      { error: { code: "range_not_satisfiable", message } },
      { status: 416, headers: { ...headers, "content-range": `bytes */${size}` } },
    );
  }
  const [start, end] = wanted.kind === "part" ? [wanted.start, wanted.end] : [0, size - 1];
  const length = end - start + 1;
  headers["content-length"] = String(length);
  if (wanted.kind === "part") headers["content-range"] = `bytes ${start}-${end}/${size}`;
  const status = wanted.kind === "part" ? 206 : 200;
  if (length === 0) {
    await file.close();
    return new Response(null, { status, headers });
  }
  const stream = createReadStream("", {
    fd: file,
    start,
    end,
    highWaterMark: READ_CHUNK_BYTES,
    autoClose: true,
  });
  return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, { status, headers });
}
