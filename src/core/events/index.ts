export { eventHeader } from "./header.ts";
export { createLaneView, reduceLaneSnapshot } from "./lane.ts";
export {
  CREDENTIAL_REVOKED_CLOSE,
  DROPPED_BY_TEST_CLOSE,
  TOKEN_EXPIRED_CLOSE,
} from "./socket-close.ts";
export type * from "./types.ts";
