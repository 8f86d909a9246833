/**
 * The local stack the whole-stack benches run against: a sandbox host and `wrangler dev`
 * started exactly as the e2e tests start them (test/e2e/global-setup.ts), from this
 * checkout or, for a before/after in the same run, from another one (`BENCH_BEFORE`).
 */
import path from "node:path";
import { runGlobalSetup, type SetupOptions } from "./global-setup.ts";
import { groupOf } from "./process-group.ts";

export interface Stack {
  apiUrl: string;
  apiToken: string;
  /** The sandbox host's workspace root; its spill files are in the `.spill` sibling. */
  sandboxRoot: string;
  /** The sandbox host itself, and the token of its routes (a bench's own alternative). */
  sandboxUrl: string;
  sandboxToken: string;
  /** The Worker's inspector (absent in a checkout whose setup does not provide it). */
  inspectorUrl?: string;
  /** The process group of its `wrangler dev` (workerd is in it). */
  pgid: number;
  stop(): Promise<void>;
}

/**
 * Starts the stack of the checkout at `root` (default: this one); `options` go to its
 * global setup (a wrangler config of the bench's own).
 * @example const before = await startStack(process.env.BENCH_BEFORE)
 */
export async function startStack(
  root = path.resolve(import.meta.dirname, ".."),
  options: SetupOptions = {},
): Promise<Stack> {
  const { provided, stop } = await runGlobalSetup("test/e2e/global-setup.ts", root, options);
  const apiUrl = provided.apiUrl!;
  const pgid = groupOf(["dev", "--port", new URL(apiUrl).port]);
  if (pgid === null) {
    await stop();
    throw new Error("cannot find the wrangler dev process group");
  }
  return {
    apiUrl,
    apiToken: provided.apiToken!,
    sandboxRoot: provided.sandboxRoot!,
    sandboxUrl: provided.sandboxUrl!,
    sandboxToken: provided.sandboxToken!,
    ...(provided.inspectorUrl ? { inspectorUrl: provided.inspectorUrl } : {}),
    pgid,
    stop,
  };
}

/**
 * Starts this checkout's stack with its sandbox host keeping `poolSize` made ahead
 * (`SANDBOX_POOL_SIZE`; undefined: the host's default). The host reads it from the
 * environment it inherits, which is set back as it was once the stack is up.
 * @example const empty = await startStackWithPool("0")
 */
export async function startStackWithPool(poolSize: string | undefined): Promise<Stack> {
  const saved = process.env.SANDBOX_POOL_SIZE;
  if (poolSize === undefined) delete process.env.SANDBOX_POOL_SIZE;
  else process.env.SANDBOX_POOL_SIZE = poolSize;
  try {
    return await startStack();
  } finally {
    if (saved === undefined) delete process.env.SANDBOX_POOL_SIZE;
    else process.env.SANDBOX_POOL_SIZE = saved;
  }
}
