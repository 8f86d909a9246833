export { CONTAINER_STOPPED, SandboxHttpError, SandboxStreamError } from "./errors.ts";
export { execIdFor } from "./exec-id.ts";
export { readNdjson } from "./ndjson.ts";
export { SandboxClient } from "./sandbox-client.ts";
export {
  admitCommand,
  CONTAINER_PLACEMENT,
  CREATED_SANDBOX_ID,
  checkSandboxName,
  DEFAULT_SANDBOX,
  placementOf,
  probeSandbox,
  resolveSandbox,
  sandboxTable,
  sandboxTokenName,
} from "./sandbox-routing.ts";
export { bashEnding, runShell, type ShellRunResult } from "./shell-run.ts";
export { fetchIdempotent } from "./transient-retry.ts";
export type * from "./types.ts";
