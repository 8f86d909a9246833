export { DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from "./config.ts";
export { DEFAULT_COMMAND_LIMITS, DEFAULT_MAX_SPILL_BYTES } from "./jail/limits.ts";
export { type SandboxHost, startSandboxHost } from "./server.ts";
