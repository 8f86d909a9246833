/**
 * `GET /v1/exec/:execId/spill`: the complete raw output of one exec, read from its spill
 * file (`.toolwire/spill/<execId>.log`), whole or one byte range, streamed from disk.
 *
 * The file is read the way it is written (decision 030): the spill directory's real path
 * must lie inside the workspace, the file is opened without following a symlink and
 * without blocking on a FIFO, and it must be a regular file with one name. A command can
 * plant anything at a predictable path; none of it makes the host read another file.
 */
import { constants, createReadStream } from "node:fs";
import { type FileHandle, open, realpath } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { EXEC_ID_PATTERN } from "../src/protocol/index.ts";
import { byteRange } from "./byte-range.ts";
import { SandboxError } from "./errors.ts";
import type { Workspace } from "./workspace.ts";

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Read size of the file stream: large enough that a gigabyte is ~16k reads. */
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * The response for `GET /v1/exec/:execId/spill` with the request's `Range` header.
 * A running exec's file is served up to its size when it was opened.
 * @example app.get("/v1/exec/:execId/spill", (c) => spillResponse(workspace, spillDir, c.req.param("execId"), c.req.header("range")))
 */
export async function spillResponse(
  workspace: Workspace,
  spillDir: string,
  execId: string,
  range: string | undefined,
): Promise<Response> {
  if (!EXEC_ID_PATTERN.test(execId)) {
    throw new SandboxError(
      400,
      "bad_request",
      `'${execId}' is not an exec id ([A-Za-z0-9_-]{1,128})`,
    );
  }
  const rel = `${spillDir}/${execId}.log`;
  const file = await openSpill(workspace, spillDir, rel);
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

/** Opens the spill file for reading, or refuses with what a caller can act on. */
async function openSpill(workspace: Workspace, spillDir: string, rel: string): Promise<FileHandle> {
  const missing = () =>
    new SandboxError(
      404,
      "not_found",
      `no spill file ${rel} on this sandbox (the output fit in its window, or the file was removed)`,
    );
  let dir: string;
  try {
    dir = await realpath(await workspace.resolve(spillDir));
  } catch (err) {
    if (err instanceof SandboxError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw missing();
    throw err;
  }
  if (!workspace.contains(dir)) {
    throw new SandboxError(403, "forbidden", `${spillDir} resolves outside the workspace root`);
  }
  let file: FileHandle;
  try {
    file = await open(path.join(dir, path.basename(rel)), READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw missing();
    if (code === "ELOOP") {
      throw new SandboxError(
        403,
        "forbidden",
        `${rel} is a symbolic link; the host does not follow it`,
      );
    }
    if (code === "ENXIO") throw new SandboxError(403, "forbidden", `${rel} is a FIFO or a device`);
    throw err;
  }
  const stat = await file.stat();
  if (!stat.isFile() || stat.nlink !== 1) {
    await file.close();
    const what = stat.isFile() ? `a hard link (${stat.nlink} names)` : "not a regular file";
    throw new SandboxError(
      403,
      "forbidden",
      `${rel} is ${what}; the host serves only its own spill files`,
    );
  }
  return file;
}
