/**
 * The Worker entry the worker tests run: production's app, with the DO binding's class
 * (`InvocationDO` in wrangler.toml) bound to the test subclass.
 */
export { default } from "../../src/index.ts";
export { TestInvocationDO as InvocationDO } from "./test-invocation-do.ts";
