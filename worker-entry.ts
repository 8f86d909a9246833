/**
 * Worker entry: the HTTP app and the Durable Object classes it fronts. It stands above
 * `src/` and `durable-objects/` because it is the one file that joins them.
 */
import { app } from "./src/worker/index.ts";

export { InvocationDO } from "./durable-objects/invocation/invocation.ts";
export { McpSessionDO } from "./durable-objects/mcp-session/mcp-session.ts";
export { RunDO } from "./durable-objects/run/run.ts";
export { SandboxContainer } from "./durable-objects/sandbox/container.ts";
export { ContainerPoolDO } from "./durable-objects/sandbox/container-pool.ts";
export { SandboxDO } from "./durable-objects/sandbox/sandbox.ts";
export { SandboxDirectoryDO } from "./durable-objects/sandbox/sandbox-directory.ts";

export default app;
