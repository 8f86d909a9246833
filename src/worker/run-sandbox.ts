/**
 * A run's own sandbox (`"sandbox": "new"` with a `runId`, decision 221): made on the
 * run's first such call, recorded in its Run DO, and named by every later call of the
 * run, so a hosted agent needs no create call. Two first calls at once make one each;
 * the Run DO keeps the first claim and the other sandbox is removed at once.
 */
import type { RunApi } from "../protocol/index.ts";
import { makeSandbox } from "./new-sandbox.ts";
import { sandboxStub } from "./sandbox-stub.ts";

/** Longest sandbox name (the create route's cap); a longer run id is cut to fit. */
const NAME_CHARS = 128;

/**
 * The id of the sandbox run `runId` owns, made now if it has none. An ended one is
 * still answered: the call then gets the sandbox's own 410, which says how it ended.
 * @example const sandbox = await runSandbox(env, "agent-run-7"); // "sbx_default_…"
 */
export async function runSandbox(env: Env, runId: string): Promise<string> {
  const run = env.RUNS.getByName(runId) as unknown as RunApi;
  const owned = await run.sandbox();
  if (owned !== null) return owned;
  const { view: made } = await makeSandbox(env, { name: `run ${runId}`.slice(0, NAME_CHARS) });
  const claimed = await run.claimSandbox(made.id);
  if (claimed !== made.id) {
    await sandboxStub(env, made.id).remove();
  }
  return claimed;
}
