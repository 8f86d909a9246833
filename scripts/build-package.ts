/**
 * Builds what the package ships: `tsc -p tsconfig.client.json` compiles the client
 * (`toolwire/client`) and the CLI, with the pure core they import, to JavaScript and
 * declarations in dist/package/ (git-ignored), imports rewritten from `.ts` to `.js`. Node
 * strips types only outside node_modules, so an installed Toolwire needs this build.
 * Run by `npm pack` and by installs from a git URL (`prepare`); see decision 064.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { buildWorkerPackage } from "./build-worker-package.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

// A module removed from src/ must not live on in the package.
rmSync(`${root}dist/package`, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", `${root}tsconfig.client.json`], { stdio: "inherit" });
const sizes = await buildWorkerPackage();
console.error(
  `toolwire/worker: ${(sizes.worker / 1024).toFixed(0)} KiB; sandbox host: ${(sizes.sandboxHost / 1024).toFixed(0)} KiB`,
);
