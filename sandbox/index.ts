export { createSandboxApp, type SandboxApp } from "./app.ts";
export { configFromEnv, DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from "./config.ts";
export { type Isolation, Jail } from "./jail/jail.ts";
export {
  type CommandLimits,
  DEFAULT_COMMAND_LIMITS,
  DEFAULT_MAX_SPILL_BYTES,
} from "./jail/limits.ts";
export { startSandboxHost } from "./server.ts";
