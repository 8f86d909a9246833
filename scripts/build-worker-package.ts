/**
 * Builds what `toolwire/worker` and `toolwire/testing` ship (docs/testing.md), into
 * dist/package/: the Worker as one ES module with its Durable Object classes
 * (`worker/index.js`, bundled by wrangler as `wrangler deploy` would), the viewer's pages
 * its `ASSETS` binding serves (`worker/public/`), the facts of wrangler.toml a Miniflare
 * configuration needs (`worker/facts.json`), and the sandbox host as one module
 * (`sandbox-host/main.mjs`). wrangler.toml stays the one place those facts are written.
 */
import { execFileSync } from "node:child_process";
import { cpSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { buildSandboxHost } from "../sandbox/build.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT = path.join(ROOT, "dist/package");

/** Builds the Worker, its pages and facts, and the sandbox host; answers their sizes in bytes. */
export async function buildWorkerPackage(): Promise<{ worker: number; sandboxHost: number }> {
  const workerDir = path.join(OUT, "worker");
  rmSync(workerDir, { recursive: true, force: true });
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-client.ts")], {
    // Its lines go to stderr: `npm pack --json` prints its JSON on stdout after this build.
    stdio: ["ignore", process.stderr, "inherit"],
  });
  const wranglerDir = path.dirname(createRequire(import.meta.url).resolve("wrangler/package.json"));
  const wrangler = path.join(wranglerDir, "bin/wrangler.js");
  execFileSync(
    process.execPath,
    [
      wrangler,
      "deploy",
      "--dry-run",
      "--minify",
      "--outdir",
      workerDir,
      "--config",
      "wrangler.toml",
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
    },
  );
  // wrangler names the module after the entry (worker-entry.ts): the package's is index.js.
  renameSync(path.join(workerDir, "worker-entry.js"), path.join(workerDir, "index.js"));
  // Only the module ships: the source map is four times its size and points into src/.
  rmSync(path.join(workerDir, "worker-entry.js.map"), { force: true });
  rmSync(path.join(workerDir, "README.md"), { force: true });
  cpSync(path.join(ROOT, "public"), path.join(workerDir, "public"), { recursive: true });

  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(ROOT, "wrangler.toml"));
  const facts = {
    compatibilityDate: workerOptions.compatibilityDate,
    compatibilityFlags: workerOptions.compatibilityFlags ?? [],
    durableObjects: workerOptions.durableObjects,
    bindings: workerOptions.bindings,
  };
  writeFileSync(path.join(workerDir, "facts.json"), `${JSON.stringify(facts, null, 2)}\n`);

  const sandboxHost = await buildSandboxHost(path.join(OUT, "sandbox-host/main.mjs"));
  return { worker: statSync(path.join(workerDir, "index.js")).size, sandboxHost };
}
