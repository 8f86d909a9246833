/**
 * The Worker entry the worker tests run: production's app and classes, with the
 * invocation binding's class (`InvocationDO` in wrangler.toml) bound to the test subclass.
 */
export {
  default,
  McpSessionDO,
  RunDO,
  SandboxDirectoryDO,
  SandboxDO,
} from "../../worker-entry.ts";
export { TestInvocationDO as InvocationDO } from "./test-invocation-do.ts";
