/** Reaching a created sandbox's record: the Sandbox DO named by its id (decision 142). */
import type { SandboxApi } from "../protocol/index.ts";

/**
 * The Sandbox DO of `id`.
 * @example await sandboxStub(env, "sbx_default_…").view()
 */
export function sandboxStub(env: Env, id: string): SandboxApi {
  return env.SANDBOX_RECORDS.getByName(id) as unknown as SandboxApi;
}
