export {
  CONTAINER_STOPPED,
  SandboxHttpError,
  SandboxStreamError,
  SandboxUnreachableError,
} from "./errors.ts";
export { execIdFor } from "./exec-id.ts";
export { MAX_NDJSON_LINE_BYTES, readNdjson } from "./ndjson.ts";
export { type KillResult, SandboxClient } from "./sandbox-client.ts";
export {
  admitCommand,
  CONTAINER_PLACEMENT,
  CREATED_SANDBOX_ID,
  checkSandboxName,
  DEFAULT_SANDBOX,
  placementOf,
  probeSandbox,
  resolveSandbox,
  SANDBOX_PROBE_TIMEOUT_MS,
  type SandboxContainerNamespace,
  type SandboxSettings,
  type SandboxTarget,
  sandboxTable,
  sandboxTokenName,
} from "./sandbox-routing.ts";
export {
  bashEnding,
  runShell,
  type ShellRunOptions,
  type ShellRunResult,
} from "./shell-run.ts";
export { fetchIdempotent } from "./transient-retry.ts";
export type * from "./types.ts";
