/**
 * Whether the sandbox token a subscriber reads with still holds (decision 253): its
 * sandbox's record, asked as the Worker asks it at every request (its nonce is the
 * current one and the sandbox is active). A record that cannot be asked now counts as
 * holding: a reader is never cut off for the platform's hiccup, only for a revocation.
 */
import type { SandboxApi, SandboxCredential } from "../../../src/protocol/index.ts";

/**
 * @example await subscribers.endRevoked((c) => sandboxTokenHolds(env, c));
 */
export async function sandboxTokenHolds(env: Env, credential: SandboxCredential): Promise<boolean> {
  const records = env.SANDBOX_RECORDS.getByName(credential.sandbox) as unknown as SandboxApi;
  try {
    return (await records.checkToken(credential.nonce)).ok;
  } catch {
    return true;
  }
}
