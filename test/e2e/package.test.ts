// Toolwire as another project gets it: `npm pack` (whose `prepack` builds
// dist/package), the tarball installed offline into an empty project (no "type"), `tsc`
// over docs/client.md's example (Node) and over a browser-only use, the example run
// word for word against the real Worker and sandbox host of global-setup.ts on the
// project's Node 22 and on the system Node (20 here), and the installed `toolwire` bin
// on both.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { packedToolwire, shellEnv } from "../support/packed-toolwire.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const TSC = path.join(ROOT, "node_modules/typescript/bin/tsc");
const exec = promisify(execFile);

/** The Nodes a user may run the package on: the project's own 22 and the system's (20 here). */
const NODES = ["node_modules/.bin/node", "/usr/bin/node"].map((bin) => {
  const file = path.resolve(ROOT, bin);
  return { file, version: execFileSync(file, ["--version"], { encoding: "utf8" }).trim() };
});

interface Manifest {
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
}

interface LockEntry {
  version: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/**
 * The scratch project's lockfile: the tarball, and every package it needs pinned as
 * this repository's lockfile pins it (with a tarball URL, so npm asks the registry
 * for no metadata): `npm ci --offline` then installs from the npm cache alone.
 */
function scratchLock(manifest: Manifest, tarball: string, registry: string): unknown {
  const repo = (
    JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockEntry>;
    }
  ).packages;
  const packages: Record<string, LockEntry> = {};
  const wanted = Object.keys(manifest.dependencies);
  for (let name = wanted.pop(); name !== undefined; name = wanted.pop()) {
    const key = `node_modules/${name}`;
    if (packages[key]) continue;
    const entry = repo[key];
    if (!entry) throw new Error(`${name} is not at the top of package-lock.json`);
    const file = `${name.split("/").at(-1)}-${entry.version}.tgz`;
    packages[key] = { ...entry, resolved: `${registry.replace(/\/$/, "")}/${name}/-/${file}` };
    const optional = entry.peerDependenciesMeta ?? {};
    wanted.push(
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((peer) => !optional[peer]?.optional),
    );
  }
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const spec = `file:${path.basename(tarball)}`;
  return {
    name: "scratch",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "scratch", dependencies: { toolwire: spec } },
      "node_modules/toolwire": {
        version: manifest.version,
        resolved: spec,
        integrity,
        dependencies: manifest.dependencies,
        bin: manifest.bin,
      },
      ...packages,
    },
  };
}

/** The first ```js block of docs/client.md's "Example" section, verbatim (the README includes it). */
function clientExample(): string {
  const doc = readFileSync(path.join(ROOT, "docs/client.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Example"));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error("docs/client.md has no js block under ## Example");
  return code;
}

/** A PATH on which `node` is `nodeFile` (as a user with that Node installed has). */
function pathWith(nodeFile: string): string {
  return `${path.dirname(nodeFile)}${path.delimiter}${process.env.PATH}`;
}

const BROWSER_USE = `import {
  type HarnessEvent,
  type Subscription,
  subscribe,
  type ToolOutputState,
  ToolwireClient,
  ToolwireError,
} from "toolwire/client";

const sub: Subscription = subscribe(location.href, { transport: "sse" });
sub.onChange((s) => {
  const state: ToolOutputState | null = s.state;
  const last: HarnessEvent | undefined = s.events.at(-1);
  document.title = \`\${state?.truncation.totalBytes ?? 0} bytes, last \${last?.type ?? "none"}\`;
});
const client = new ToolwireClient({ baseUrl: location.origin, subscribeToken: "t" });
client.get("id").catch((error: unknown) => {
  if (error instanceof ToolwireError) console.log(error.code);
});
`;

/** Strict, declarations checked too (skipLibCheck off), no DOM: what a Node project has. */
const NODE_TSCONFIG = {
  compilerOptions: {
    allowJs: true,
    checkJs: true,
    target: "ES2023",
    module: "nodenext",
    moduleResolution: "nodenext",
    lib: ["ES2023"],
    types: ["node"],
    typeRoots: [path.join(ROOT, "node_modules/@types")],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  },
  files: ["example.mjs"],
};

/** A bundled web page: the DOM and no Node types at all. */
const BROWSER_TSCONFIG = {
  compilerOptions: {
    target: "ES2023",
    module: "esnext",
    moduleResolution: "bundler",
    lib: ["ES2023", "DOM", "DOM.Iterable"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  },
  files: ["browser.ts"],
};

describe("toolwire as an installed package", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-package-"));
  const app = path.join(dir, "app");
  let packed: string[] = [];
  let installLog = { stdout: "", stderr: "" };

  beforeAll(async () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as Manifest;
    const { tarball, files } = await packedToolwire();
    packed = files;
    const info = { filename: path.basename(tarball) };
    const registry = (
      await exec("npm", ["config", "get", "registry"], { cwd: ROOT, env: shellEnv })
    ).stdout.trim();

    mkdirSync(app);
    writeFileSync(
      path.join(app, "package.json"),
      // What `npm init -y` leaves: no "type", so only the .mjs extension makes an ES module.
      JSON.stringify({
        name: "scratch",
        private: true,
        dependencies: { toolwire: `file:${info.filename}` },
      }),
    );
    // The lock names the tarball relative to the project: copy it in.
    copyFileSync(tarball, path.join(app, info.filename));
    writeFileSync(
      path.join(app, "package-lock.json"),
      JSON.stringify(scratchLock(manifest, path.join(app, info.filename), registry)),
    );
    // Scripts allowed: an install script in the tarball would run (and npm would warn).
    installLog = await exec("npm", ["ci", "--offline", "--no-audit", "--no-fund"], {
      cwd: app,
      env: shellEnv,
    });
    writeFileSync(path.join(app, "example.mjs"), clientExample());
    writeFileSync(path.join(app, "browser.ts"), BROWSER_USE);
    writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify(NODE_TSCONFIG));
    writeFileSync(path.join(app, "tsconfig.browser.json"), JSON.stringify(BROWSER_TSCONFIG));
  }, 90_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("ships the built client, the Worker and the testing export, the bin, and no sources or tests", () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        "docs/client.md",
        "bin/toolwire",
        "dist/package/client/index.js",
        "dist/package/client/index.d.ts",
        "dist/package/client/cli/main.js",
        "dist/package/testing/index.js",
        "dist/package/testing/index.d.ts",
        "dist/package/worker/index.js",
        "dist/package/worker/facts.json",
        "dist/package/worker/public/viewer.html",
        "dist/package/sandbox-host/main.mjs",
        "package.json",
        "README.md",
      ]),
    );
    expect(packed.filter((file) => /^(src|test|durable-objects|sandbox)\//.test(file))).toEqual([]);
    expect(packed.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
  });

  it("adds only the client's own runtime dependency, with no script and no warning", () => {
    const top = readdirSync(path.join(app, "node_modules")).filter((name) => !name.startsWith("."));
    expect(top.sort()).toEqual(["eventsource-parser", "toolwire"]);
    expect(installLog.stdout).toMatch(/added 2 packages/);
    expect(installLog.stderr).not.toMatch(/warn/i);
    const installed = JSON.parse(
      readFileSync(path.join(app, "node_modules/toolwire/package.json"), "utf8"),
    ) as { engines: { node: string }; scripts: Record<string, string> };
    expect(installed.engines.node).toBe(">=20");
    for (const script of ["preinstall", "install", "postinstall", "prepare"])
      expect(installed.scripts[script]).toBeUndefined();
  });

  it("type-checks docs/client.md's example for Node and a browser use without Node types", async () => {
    const checks = await Promise.allSettled([
      exec(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: app, env: shellEnv }),
      exec(process.execPath, [TSC, "-p", "tsconfig.browser.json"], { cwd: app, env: shellEnv }),
    ]);
    const failures = checks.flatMap((check) =>
      check.status === "rejected" ? [String((check.reason as { stdout?: string }).stdout)] : [],
    );
    expect(failures).toEqual([]);
  }, 60_000);

  it.each(NODES)(
    "runs docs/client.md's example word for word on Node $version",
    async (node) => {
      const marker = `package-test-${node.version}-${Date.now()}.txt`;
      writeFileSync(path.join(inject("sandboxRoot"), marker), "");
      const { stdout, stderr } = await exec(node.file, ["example.mjs"], {
        cwd: app,
        env: { ...shellEnv, TOOLWIRE_URL: inject("apiUrl"), TOOLWIRE_TOKEN: inject("apiToken") },
        timeout: 20_000,
      });
      expect(stdout).toContain(marker);
      expect(stdout.trimEnd().split("\n").at(-1)).toBe("settled");
      expect(stderr).toMatch(/^settled: \d+ bytes$/m);
      expect(stderr).not.toMatch(/reconnecting/);
    },
    30_000,
  );

  it.each(NODES)(
    "runs the installed CLI on Node $version to the end of a command",
    async (node) => {
      const bin = path.join(app, "node_modules/.bin/toolwire");
      const { stdout } = await exec(bin, ["run", "bash", "--command", "echo one; echo two"], {
        cwd: app,
        env: {
          ...shellEnv,
          PATH: pathWith(node.file),
          TOOLWIRE_URL: inject("apiUrl"),
          TOOLWIRE_TOKEN: inject("apiToken"),
        },
        timeout: 20_000,
      });
      expect(stdout).toBe("one\ntwo\n");
    },
    30_000,
  );

  it("keeps toolwire the CLI bin, running the built code from node_modules", async () => {
    const bin = path.join(app, "node_modules/.bin/toolwire");
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as Manifest;
    const version = await exec(bin, ["--version"], { cwd: app, env: shellEnv });
    expect(version.stdout).toBe(`toolwire ${manifest.version}\n`);
    const tools = await exec(bin, ["tools"], {
      cwd: app,
      env: { ...shellEnv, TOOLWIRE_URL: inject("apiUrl"), TOOLWIRE_TOKEN: inject("apiToken") },
    });
    expect(tools.stdout).toMatch(/^bash\b/m);
    // A usage mistake still exits 2 from the installed build.
    const usage = await exec(bin, ["watch"], { cwd: app, env: shellEnv }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining("watch needs") });
  }, 30_000);

  it("does not let a project reach into src/", async () => {
    const reach = await exec(
      process.execPath,
      ["--input-type=module", "-e", 'await import("toolwire/src/client/index.ts")'],
      { cwd: app, env: shellEnv },
    ).catch((error: { stderr: string }) => error);
    expect(String((reach as { stderr?: string }).stderr)).toContain(
      "ERR_PACKAGE_PATH_NOT_EXPORTED",
    );
  });
});
