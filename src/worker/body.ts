/**
 * Reads a JSON request body under a byte cap. The cap is checked twice: against the
 * declared `Content-Length` before reading, and against the bytes actually read (a
 * chunked or lying client is cut off at the first byte past the cap).
 */
import { raise } from "./errors.ts";

/** Largest accepted request body: 1 MiB (exactly 1,048,576 bytes is accepted). */
export const MAX_BODY_BYTES = 1024 * 1024;

function tooLarge(limit: number, seen: string): never {
  raise(
    "too_large",
    `request body is ${seen}; the limit is ${limit} bytes (1 MiB). Send large output in several POST /v1/invocations/:id/output calls`,
  );
}

async function readCapped(req: Request, limit: number): Promise<Uint8Array> {
  const declared = req.headers.get("Content-Length");
  if (declared !== null && Number(declared) > limit) tooLarge(limit, `${declared} bytes`);
  if (req.body === null) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      tooLarge(limit, `more than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}

/**
 * The parsed JSON body, or a 413 (over `limit`) / 400 (empty, not UTF-8, not JSON).
 * @example const body: unknown = await readJsonBody(c.req.raw)
 */
export async function readJsonBody(req: Request, limit: number = MAX_BODY_BYTES): Promise<unknown> {
  const bytes = await readCapped(req, limit);
  if (bytes.byteLength === 0) raise("bad_request", "request body is empty; send a JSON object");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    raise("bad_request", "request body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    raise("bad_request", `request body is not valid JSON: ${(err as Error).message}`);
  }
}
