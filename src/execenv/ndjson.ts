import { utf8ByteLength } from "../core/retention/utf8.ts";
import { SandboxStreamError } from "./errors.ts";

/**
 * Longest NDJSON line accepted. A Shell update carries at most one bounded view: the
 * host caps `maxBytes` at 4 MiB, and JSON escaping can grow text 6-fold (`\u0001`).
 */
const MAX_NDJSON_LINE_BYTES = 32 * 1024 * 1024;

/**
 * Splits a byte stream into NDJSON lines and parses each. UTF-8 is decoded as a stream
 * (a character split across chunks is kept whole); blank lines are skipped; a line
 * longer than `maxLineBytes` or that is not JSON throws `SandboxStreamError`.
 * A final line without its newline is still yielded.
 * @example for await (const value of readNdjson(response.body)) console.log(value);
 */
export async function* readNdjson(
  body: ReadableStream<Uint8Array>,
  maxLineBytes = MAX_NDJSON_LINE_BYTES,
): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buffered = "";
  let complete = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n", start)) {
        const line = buffered.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== "") yield parseLine(line);
      }
      buffered = buffered.slice(start);
      // Each UTF-16 unit is at most 3 UTF-8 bytes: a cheap upper bound on the line's size.
      if (buffered.length * 3 > maxLineBytes && utf8ByteLength(buffered) > maxLineBytes) {
        throw new SandboxStreamError(
          `NDJSON line exceeds ${maxLineBytes} bytes; the stream is not a sandbox exec stream`,
        );
      }
      if (done) break;
    }
    complete = true;
    if (buffered.trim() !== "") yield parseLine(buffered);
  } finally {
    // A consumer that stops early (or a parse error) must not leave the body open.
    if (!complete) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (err) {
    throw new SandboxStreamError(
      `malformed NDJSON line (${(err as Error).message}): ${line.slice(0, 80)}`,
      err,
    );
  }
}
