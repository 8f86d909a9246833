/**
 * Durable Streams (docs/protocol.md#durable-streams): the wire's vocabulary and the read
 * side over any source of bytes. Web standards only; the Worker and the Invocation
 * Durable Object are its adapters.
 */
export {
  answerRead,
  appendTooLarge,
  type StreamSlice,
  type StreamSource,
  streamError,
} from "./read.ts";
export {
  formatOffset,
  HEADER,
  isJsonType,
  isTextType,
  MAX_APPEND_BYTES,
  mediaType,
  nextCursor,
  PREFLIGHT_HEADERS,
  parseOffset,
  READ_CHUNK_BYTES,
  SECURITY_HEADERS,
  SSE_OPEN_MS,
} from "./wire.ts";
