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
  MAX_APPEND_BYTES,
  mediaType,
  PREFLIGHT_HEADERS,
  parseOffset,
  SECURITY_HEADERS,
} from "./wire.ts";
