/**
 * Runs one of the test suites' global setups outside vitest (the benches start the
 * stack exactly as the tests do) and answers what it provided and how to stop it.
 */
import path from "node:path";
import type { TestProject } from "vitest/node";

/** A global setup; the e2e one also takes `options` (a bench's own wrangler config). */
type Setup = (
  project: TestProject,
  options?: SetupOptions,
) => Promise<(() => Promise<void>) | void>;

export interface SetupOptions {
  /** A wrangler config other than the project's. */
  wranglerConfig?: string;
}

export interface SetUp {
  /** What the setup passed to `project.provide`. */
  provided: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Imports the global setup at `file` (relative to `root`, by default this checkout) and runs
 * it with `options`.
 * @example const { provided, stop } = await runGlobalSetup("test/e2e/global-setup.ts")
 */
export async function runGlobalSetup(
  file: string,
  root = path.resolve(import.meta.dirname, ".."),
  options: SetupOptions = {},
): Promise<SetUp> {
  const setup = (await import(path.join(root, file))).default as Setup;
  const provided: Record<string, string> = {};
  const project = {
    provide: (key: string, value: string) => {
      provided[key] = value;
    },
  } as unknown as TestProject;
  const stop = await setup(project, options);
  return { provided, stop: stop ?? (async () => {}) };
}
