/** The Worker's public face: the app and what tests and clients read about its routes. */
export { app, VIEWER_ASSET } from "./app.ts";
export { MAX_BODY_BYTES } from "./body.ts";
export { MAX_WAIT_SECONDS } from "./schemas.ts";
export {
  mintSubscribeToken,
  SUBSCRIBE_TOKEN_TTL_SECONDS,
  verifySubscribeToken,
} from "./subscribe-token.ts";
