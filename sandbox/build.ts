/**
 * Optional deployment build of the sandbox host: `npm run build:sandbox` bundles
 * sandbox/main.ts and its dependencies into one minified ES module,
 * `dist/sandbox/main.mjs`, run with `node dist/sandbox/main.mjs`. `node sandbox/main.ts`
 * keeps working without it; the bundle only skips Node's TypeScript loader and the
 * module graph, which saves ~45 MiB of resident memory (decision 038).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Where `npm run build:sandbox` writes the bundle. */
const SANDBOX_BUNDLE = path.join(ROOT, "dist/sandbox/main.mjs");

/**
 * Bundles the host into `outfile` and returns its size in bytes.
 * @example await buildSandboxHost("/tmp/host.mjs"); // then: node /tmp/host.mjs
 */
export async function buildSandboxHost(outfile: string = SANDBOX_BUNDLE): Promise<number> {
  const result = await build({
    entryPoints: [path.join(ROOT, "sandbox/main.ts")],
    outfile,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "node",
    target: "node22",
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
  });
  return Object.values(result.metafile.outputs).reduce((sum, out) => sum + out.bytes, 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await buildSandboxHost();
  console.log(
    `wrote ${path.relative(process.cwd(), SANDBOX_BUNDLE)} (${(bytes / 1024).toFixed(0)} KiB)`,
  );
}
