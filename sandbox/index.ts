export { createSandboxApp, FILE_TOOL_DEFAULTS, type SandboxApp, SPILL_DIR } from "./app.ts";
export { configFromEnv, DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from "./config.ts";
export { type SandboxHost, startSandboxHost } from "./server.ts";
