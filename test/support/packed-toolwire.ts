/**
 * Toolwire packed as `npm pack` makes it (its `prepack` builds dist/package), once per
 * Vitest run: the e2e tests that install the package (package.test.ts, the Miniflare
 * sample) share one tarball. Test files of a run are children of one Vitest process and
 * run one at a time in the e2e project, so its pid names the shared folder.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

export interface PackedToolwire {
  /** Absolute path of the tarball. */
  tarball: string;
  /** The paths inside the package, as npm lists them. */
  files: string[];
}

/** The environment a developer's shell would give: this Node 22 first, no npm script variables. */
export const shellEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
};

/** Packs Toolwire, or answers the tarball an earlier test file of this run packed. */
export async function packedToolwire(): Promise<PackedToolwire> {
  const dir = path.join(tmpdir(), `toolwire-pack-${process.ppid}`);
  const record = path.join(dir, "packed.json");
  if (existsSync(record)) return JSON.parse(readFileSync(record, "utf8")) as PackedToolwire;
  mkdirSync(dir, { recursive: true });
  // The build runs on its own: what it prints would come before npm pack's JSON.
  await exec("npm", ["run", "build"], { cwd: ROOT, env: shellEnv, maxBuffer: 64 * 1024 * 1024 });
  const pack = await exec(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", dir],
    {
      cwd: ROOT,
      env: shellEnv,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  if (!info) throw new Error(`npm pack printed no result: ${pack.stdout}`);
  const packed = {
    tarball: path.join(dir, info.filename),
    files: info.files.map((file) => file.path),
  };
  writeFileSync(record, JSON.stringify(packed));
  return packed;
}
