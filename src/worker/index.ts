/** The Worker's public face: the app and the helpers the DO and tools share with it. */
export { app, VIEWER_ASSET } from "./app.ts";
export { MAX_BODY_BYTES } from "./body.ts";
export { apiError } from "./errors.ts";
export {
  checkSandboxName,
  DEFAULT_SANDBOX,
  probeSandbox,
  resolveSandbox,
  SANDBOX_PROBE_TIMEOUT_MS,
  type SandboxTarget,
  sandboxTable,
  sandboxTokenName,
} from "./sandboxes.ts";
export { MAX_WAIT_SECONDS } from "./schemas.ts";
export {
  mintSubscribeToken,
  SUBSCRIBE_TOKEN_TTL_SECONDS,
  verifySubscribeToken,
} from "./subscribe-token.ts";
