/** The Worker's public face: the app and what tests and clients read about its routes. */
export { app } from "./app.ts";
export { MAX_BODY_BYTES } from "./body.ts";
export {
  mintSubscribeToken,
  SUBSCRIBE_TOKEN_TTL_SECONDS,
  verifySubscribeToken,
} from "./subscribe-token.ts";
