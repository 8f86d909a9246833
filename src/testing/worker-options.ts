/**
 * The Toolwire Worker as another project's Miniflare or Vitest configuration takes it
 * (docs/testing.md): the built module that `toolwire/worker` exports, with the facts its
 * wrangler.toml states (compatibility date and flags, the Durable Object classes on
 * SQLite, the settings' defaults) and the secrets a test gives it.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built Worker module (`toolwire/worker`). */
export const WORKER_SCRIPT = fileURLToPath(new URL("../worker/index.js", import.meta.url));
/** The viewer's pages, which the Worker serves from its `ASSETS` binding. */
const WORKER_ASSETS = fileURLToPath(new URL("../worker/public", import.meta.url));

/** What the package build read from wrangler.toml (scripts/build-worker-package.ts). */
interface WorkerFacts {
  compatibilityDate: string;
  compatibilityFlags: string[];
  durableObjects: Record<string, { className: string; useSQLite: boolean }>;
  bindings: Record<string, string>;
}

function workerFacts(): WorkerFacts {
  const file = new URL("../worker/facts.json", import.meta.url);
  return JSON.parse(readFileSync(file, "utf8")) as WorkerFacts;
}

export interface ToolwireWorkerOptions {
  /** The sandbox hosts by name (`default` at least), or one started by `startSandboxHost`. */
  sandboxes: Record<string, string> | { url: string };
  /** The sandbox hosts' bearer token (`SANDBOX_TOKEN`). */
  sandboxToken: string;
  /** The token agents present (`API_TOKEN`); default `toolwire-test-api-token`. */
  apiToken?: string;
  /** The key of watch links (`SUBSCRIBE_SECRET`); default a fixed test value. */
  subscribeSecret?: string;
  /** The Worker's name, as a service binding names it; default `toolwire`. */
  name?: string;
  /** The `/v1/test/...` controls (drop subscribers, evict); default on. */
  testControls?: boolean;
  /** Any other setting of docs/operations.md, e.g. `SANDBOX_REJOIN_SECONDS`. */
  vars?: Record<string, string>;
}

/** One worker of Miniflare's `workers` list (plain Miniflare or Vitest's `miniflare.workers`). */
export interface ToolwireMiniflareWorker {
  name: string;
  modules: true;
  scriptPath: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  durableObjects: Record<string, { className: string; useSQLite: boolean }>;
  bindings: Record<string, string>;
  assets: {
    directory: string;
    binding: string;
    routerConfig: { has_user_worker: true; invoke_user_worker_ahead_of_assets: true };
  };
}

/** The API token a test's Toolwire accepts unless it names its own. */
export const TEST_API_TOKEN = "toolwire-test-api-token";

/**
 * Toolwire as one worker of a Miniflare configuration; bind it to your Worker with a
 * service binding (`serviceBindings: { TOOLWIRE: "toolwire" }`).
 * @example
 * const host = await startSandboxHost();
 * new Miniflare({ workers: [toolwireWorker({ sandboxes: host, sandboxToken: host.token }), yours] });
 */
export function toolwireWorker(options: ToolwireWorkerOptions): ToolwireMiniflareWorker {
  const facts = workerFacts();
  const sandboxes =
    "url" in options.sandboxes ? { default: options.sandboxes.url } : options.sandboxes;
  return {
    name: options.name ?? "toolwire",
    modules: true,
    scriptPath: WORKER_SCRIPT,
    compatibilityDate: facts.compatibilityDate,
    compatibilityFlags: facts.compatibilityFlags,
    durableObjects: facts.durableObjects,
    bindings: {
      ...facts.bindings,
      ...options.vars,
      SANDBOXES: JSON.stringify(sandboxes),
      SANDBOX_TOKEN: options.sandboxToken,
      API_TOKEN: options.apiToken ?? TEST_API_TOKEN,
      SUBSCRIBE_SECRET: options.subscribeSecret ?? "toolwire-test-subscribe-secret",
      TEST_CONTROLS: options.testControls === false ? "0" : "1",
    },
    assets: {
      directory: WORKER_ASSETS,
      binding: "ASSETS",
      routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
    },
  };
}
