/**
 * `toolwire/testing`: Toolwire inside another project's tests (docs/testing.md). A real
 * sandbox host for a global setup, and the Toolwire Worker as one worker of a Miniflare
 * or Vitest configuration, with the test controls on. There is no in-process fake: the
 * point of putting Toolwire in a test is its real bounded, durable, resumable behaviour.
 */
export {
  type SandboxHostOptions,
  type StartedSandboxHost,
  startSandboxHost,
} from "./sandbox-host.ts";
export {
  TEST_API_TOKEN,
  type ToolwireMiniflareWorker,
  type ToolwireWorkerOptions,
  toolwireWorker,
  WORKER_SCRIPT,
} from "./worker-options.ts";
