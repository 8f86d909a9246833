/**
 * JSON values stored as UTF-8 bytes split into rows of at most `MAX_ROW_BYTES`,
 * so no row comes near SQLite's 2 MB row limit in Durable Objects.
 */

/** Largest payload one row holds (1 MiB). A value of exactly this size is one row. */
export const MAX_ROW_BYTES = 1024 * 1024;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * Serializes `value` and cuts the bytes into pieces of at most `maxBytes` (a cut may
 * fall inside a multi-byte character; `fromChunks` joins bytes before decoding).
 *
 * @example
 * toChunks({ a: 1 }); // [ArrayBuffer(7)]
 */
export function toChunks(value: unknown, maxBytes = MAX_ROW_BYTES): ArrayBuffer[] {
  return bytesToChunks(utf8.encode(JSON.stringify(value)), maxBytes);
}

/**
 * Cuts a value already serialized (UTF-8 JSON) as `toChunks` does.
 * @example bytesToChunks(new TextEncoder().encode("[1]")); // [ArrayBuffer(3)]
 */
export function bytesToChunks(bytes: Uint8Array, maxBytes = MAX_ROW_BYTES): ArrayBuffer[] {
  const chunks: ArrayBuffer[] = [];
  for (let at = 0; at < bytes.length || chunks.length === 0; at += maxBytes) {
    chunks.push(bytes.slice(at, at + maxBytes).buffer);
  }
  return chunks;
}

/**
 * Joins pieces written by `toChunks` (in part order) and parses them.
 *
 * @example
 * fromChunks(toChunks([1, 2])); // [1, 2]
 */
export function fromChunks<T>(chunks: ArrayBuffer[]): T {
  let length = 0;
  for (const chunk of chunks) length += chunk.byteLength;
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(new Uint8Array(chunk), at);
    at += chunk.byteLength;
  }
  return JSON.parse(fromUtf8.decode(bytes)) as T;
}
